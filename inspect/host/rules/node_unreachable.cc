// SPDX-License-Identifier: GPL-3.0-or-later
// node-unreachable: issue 12 (fleet check through srun): a node that gave no
// profile (unreachable_node: srun could not start a task there in time, or
// the task failed) is a finding on that node, saying why.
#include "inspect/host/rules.h"

namespace trainimg::host {

namespace {

void judge(const RuleInfo& rule, FleetContext& c) {
  for (auto& n : c.nodes)
    if (n.state == "node-unreachable") n.findings.push_back(Finding(rule, n.why).in(n.node));
}

}  // namespace

const FleetRule kNodeUnreachable{
    {"node-unreachable", Severity::Error,
     "no profile from the node: srun could not start a task there in time (down, "
     "drained, busy, slurmd stopped) or the task failed",
     "sinfo -R -n NODE; check slurmd on the node; run `trainimg host capture` "
     "there by hand",
     "issue 12 (fleet check through srun)", "fleet", "docs/slurm.md#rules"},
    judge};

}  // namespace trainimg::host
