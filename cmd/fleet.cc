// SPDX-License-Identifier: GPL-3.0-or-later
// trainimg fleet check (issue 12): every node's profile through srun (or
// --profiles DIR), judged by inspect/host/fleet.h (judge_fleet), reported through
// the report path (FleetOutcome: per-node policy; --drain through scontrol).
#include "inspect/host/fleet.h"

#include "builder/slurm/slurm.h"
#include "cmd/command.h"
#include "inspect/host.h"

namespace trainimg::cmd {

namespace {

struct FleetArgs {
  builder::FleetInputs in;
  std::string expect, baseline;
};

void setup_fleet_check(CLI::App& sub, Runner& run) {
  auto a = std::make_shared<FleetArgs>();
  sub.add_option("--partition,-p", a->in.partition, "The nodes of this partition");
  sub.add_option("--nodes,-w", a->in.nodes, "A Slurm hostlist, e.g. n[1-3]");
  sub.add_option("--profiles", a->in.profiles, "Judge DIR/*.json (NODE.json each) instead of running srun");
  sub.add_option("--expect", a->expect, "As for host check: gpus=N,efas=N,kernel=K,…");
  sub.add_option("--baseline", a->baseline, "A reference node's profile (host check --baseline)");
  // --baseline names a reference node's profile; fleet reports keep no suppressed findings.
  auto rf = std::make_shared<ReportFlags>();
  ReportFlagSet set;
  set.baseline = set.write_baseline = set.show_suppressed = false;
  set.formats = "text, json, junit or sarif";
  add_report_flags(sub, rf, set);
  sub.add_option("--timeout", a->in.timeout_s,
                 "Per node: srun --immediate and time limit, seconds (default 60)");
  sub.add_flag("--drain", a->in.drain,
               "Drain failing nodes: Reason=\"trainimg: RULE: MESSAGE\" (never an admin's)");
  run = [a, rf] {
    return run_check(*rf, [&](const policy::Policy&) {
      host::HostExpectations e = host::parse_expectations(a->expect);
      std::optional<host::HostProfile> base;
      if (!a->baseline.empty()) base = host::read_profile(a->baseline);
      auto out = std::make_unique<FleetOutcome>(
          host::judge_fleet(builder::gather_fleet(a->in), e, base ? &*base : nullptr, a->baseline));
      out->drain = a->in.drain;
      return out;
    });
  };
}

const Command kFleetCommands[] = {
    {"check", "Capture every node through srun, judge it, compare the nodes", setup_fleet_check},
};

}  // namespace

void setup_fleet(CLI::App& sub, Runner& run) {
  run = add_commands(sub, kFleetCommands);
}

}  // namespace trainimg::cmd
