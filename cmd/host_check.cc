// SPDX-License-Identifier: GPL-3.0-or-later
// trainimg host check [HOST.json|--live] [--slurm [--drain]] …: the report path, or the node gate.
#include <iostream>

#include "builder/slurm/slurm.h"
#include "cmd/command.h"
#include "common/error.h"
#include "inspect/host.h"

namespace trainimg::cmd {

using namespace trainimg::host;

namespace {
struct CheckFlags {
  std::string file, expect, baseline;
  bool live = false, strict = false, slurm = false, drain = false;
  double timeout = 10;
};
}  // namespace

void setup_host_check(CLI::App& sub, Runner& run) {
  auto f = std::make_shared<CheckFlags>();
  sub.add_option("HOST.json", f->file, "A profile written by `trainimg host capture`");
  sub.add_flag("--live", f->live, "Capture this node now instead of reading a profile");
  sub.add_option(
      "--expect", f->expect,
      "gpus=N,efas=N,gpu-model=NAME,efa-driver>=V,kernel=K,nvidia-fs>=V,lustre=yes,gds=yes,lnet-efas=N,"
      "fabric-manager=yes,gdrcopy=yes,nvme-mount=yes,memlock=yes");
  sub.add_option(
      "--baseline", f->baseline,
      "A reference node's profile (trainimg.host/v1: kernel changed, versions drifted), or accepted "
      "findings (trainimg.baseline/v1: report and fail only on new ones)");
  auto rf = std::make_shared<ReportFlags>();
  ReportFlagSet set;
  set.baseline = false;  // declared above: a profile or accepted findings
  add_report_flags(sub, rf, set);
  sub.add_flag("--slurm", f->slurm,
               "Node gate (Prolog / HealthCheckProgram): with --live, the boot capture plus the fast probes; "
               "`trainimg: RULE: MESSAGE` per error on stderr, nothing on stdout");
  sub.add_flag(
      "--drain", f->drain,
      "With --slurm: drain this node (SLURMD_NODENAME) on an error, resume it when clean if trainimg "
      "drained it");
  sub.add_flag("--strict", f->strict,
               "An input that was not captured (probe absent) fails its check instead of a note");
  sub.add_option("--timeout", f->timeout, "Per-probe timeout in seconds with --live (default 10)");
  run = [f, rf] {
    // Usage first, in this order, before anything is read.
    auto expectations = [&] {
      if (f->file.empty() == !f->live)
        throw Error("host check", "give either a profile (HOST.json) or --live",
                    "trainimg host check HOST.json");
      HostExpectations e = parse_expectations(f->expect);
      e.strict = f->strict;
      if (f->drain && !f->slurm)
        throw Error("--drain", "only with --slurm", "trainimg host check --live --slurm --drain");
      return e;
    };
    if (f->slurm) {
      ReportPlan plan = plan_report(*rf);
      builder::NodeGateOptions o{.expect = expectations(), .timeout_s = f->timeout, .drain = f->drain};
      if (!f->live) throw Error("--slurm", "the node gate judges this node: add --live");
      return builder::run_node_gate(o, plan.policy, std::cerr) ? int(kExitOk) : int(kExitFindings);
    }
    return run_check(*rf, [&](const policy::Policy&) {
      // --baseline names a reference node's profile, or accepted findings:
      // the file's schema says which.
      bool findings = !f->baseline.empty() && policy::json_schema_of(f->baseline) == policy::kBaselineSchema;
      std::string reference = findings ? "" : f->baseline;
      HostExpectations e = expectations();
      auto out =
          std::make_unique<Checked>(builder::check_node(f->live ? "" : f->file, e, reference, f->timeout));
      if (findings) out->baseline = f->baseline;
      return out;
    });
  };
}

}  // namespace trainimg::cmd
