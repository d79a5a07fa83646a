// SPDX-License-Identifier: GPL-3.0-or-later
// trainimg inspect SOURCE [--expect K=V,…] [--host HOST.json] [--format …]
//                         [--fail-on …] [-o REPORT] [--config FILE|--no-config]
//                         [--baseline FILE|--write-baseline FILE] [--show-suppressed]
#include "inspect/inspect.h"

#include "cmd/command.h"
#include "inspect/host.h"
#include "inspect/sources/source.h"

namespace trainimg::cmd {

namespace {
struct InspectFlags {
  std::string source, expect, host;
};
}  // namespace

void setup_inspect(CLI::App& sub, Runner& run) {
  auto f = std::make_shared<InspectFlags>();
  sub.add_option("SOURCE", f->source,
                 "PATH.sqsh, docker-archive:PATH.tar, oci:DIR[:TAG], oci-archive:PATH.tar[:TAG], "
                 "dockerd://IMAGE[:TAG], "
                 "docker://[USER@][REGISTRY#]IMAGE[:TAG|@DIGEST] or dir:ROOTFS")
      ->required();
  sub.add_option("--expect", f->expect,
                 "host versions to match: efa-installer=V,libfabric=V,aws-ofi-nccl=V,cuda-driver=V");
  sub.add_option("--host", f->host, "host profile (trainimg.host/v1 JSON, from trainimg host capture)");
  auto rf = std::make_shared<ReportFlags>();
  add_report_flags(sub, rf);
  auto sf = std::make_shared<SourceFlags>();
  add_source_flags(sub, sf);
  run = [f, sf, rf] {
    const inspect::SourceOptions so = source_options(*sf);
    return run_check(*rf, [&](const policy::Policy& pol) {
      // The config's `expect:`, then --host, then --expect: the flags win.
      inspect::ImageExpectations e;
      for (const auto& [k, v] : pol.expect) {
        if (k == "efa-installer") e.efa_installer = v, e.efa_installer_from = pol.file;
        if (k == "libfabric") e.libfabric = v, e.libfabric_from = pol.file;
        if (k == "aws-ofi-nccl") e.aws_ofi_nccl = v, e.aws_ofi_nccl_from = pol.file;
        if (k == "cuda-driver") e.cuda_driver = v, e.cuda_driver_from = pol.file;
      }
      if (!f->host.empty())
        e = inspect::merge(e, inspect::expectations_from_host(host::read_profile(f->host), f->host));
      if (!f->expect.empty()) e = inspect::merge(e, inspect::parse_expect(f->expect));
      return std::make_unique<Checked>(inspect::inspect_image(f->source, e, so));
    });
  };
}

}  // namespace trainimg::cmd
