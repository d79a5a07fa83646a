// SPDX-License-Identifier: GPL-3.0-or-later
// trainimg inspect SOURCE [--expect K=V,…] [--host HOST.json] [--format …]
//                         [--fail-on …] [-o REPORT] [--config FILE|--no-config]
//                         [--baseline FILE|--write-baseline FILE] [--show-suppressed]
#include "inspect/inspect.h"

#include <unistd.h>

#include <iostream>

#include "cmd/command.h"
#include "common/atomic_file.h"
#include "common/report.h"
#include "inspect/host.h"

namespace trainimg::cmd {

namespace {
struct InspectFlags {
  std::string source, expect, host, format = "text", fail_on, output;
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
  sub.add_option("--format", f->format, "text, json, sarif or junit");
  sub.add_option("--fail-on", f->fail_on, "error, warning or never (default error, or the config's fail-on)");
  sub.add_option("-o,--output", f->output, "write the report to this file (atomically) instead of stdout");
  auto sf = std::make_shared<SourceFlags>();
  add_source_flags(sub, sf);
  auto pf = std::make_shared<PolicyFlags>();
  add_policy_flags(sub, pf);
  run = [f, sf, pf] {
    apply_source_flags(*sf);
    // Validate every flag before reading the image: bad usage costs nothing.
    Format format = parse_format(f->format);
    policy::Policy pol = load_policy(*pf);
    FailOn fail_on = resolve_fail_on(f->fail_on, pol);
    // The config's `expect:`, then --host, then --expect: the flags win.
    inspect::Expectations e;
    for (const auto& [k, v] : pol.expect) {
      std::string from = pol.file;
      if (k == "efa-installer") e.efa_installer = v, e.efa_installer_from = from;
      if (k == "libfabric") e.libfabric = v, e.libfabric_from = from;
      if (k == "aws-ofi-nccl") e.aws_ofi_nccl = v, e.aws_ofi_nccl_from = from;
      if (k == "cuda-driver") e.cuda_driver = v, e.cuda_driver_from = from;
    }
    if (!f->host.empty())
      e = inspect::merge(e, inspect::expectations_from_host(host::read_profile(f->host), f->host));
    if (!f->expect.empty()) e = inspect::merge(e, inspect::parse_expect(f->expect));
    Report r = inspect::inspect_image(f->source, e);
    bool wrote_baseline = apply_policy_flags(r, *pf, pol);
    TextOptions opt;
    opt.color = f->output.empty() && format == Format::Text && want_color(STDOUT_FILENO);
    std::string out = render(r, format, opt);
    if (f->output.empty())
      std::cout << out;
    else
      write_file_atomic(f->output, out);
    return wrote_baseline ? int(kExitOk) : exit_code(r, fail_on);
  };
}

}  // namespace trainimg::cmd
