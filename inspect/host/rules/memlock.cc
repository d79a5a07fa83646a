// SPDX-License-Identifier: GPL-3.0-or-later
// memlock: seed 000 "Expected results", row memlock = unlimited (collective
// libraries pin large amounts of memory).
#include "inspect/host/rules.h"

namespace trainimg::host {

namespace {

void check(const RuleInfo& rule, const HostContext& c) {
  const auto& m = c.profile.memlock;
  if (!m) {
    if (!c.cannot_tell(rule, "ulimit-l.txt"))
      c.add(
          Finding(rule, "cannot read the memlock limit (" + c.probe_state("ulimit-l.txt") + ")").in(c.file));
  } else if (*m != "unlimited")
    c.add(Finding(rule, "memlock limit is " + *m + " KiB, expected unlimited").in(c.file));
}

}  // namespace

const HostRule kMemlock{
    {"memlock", Severity::Error, "`ulimit -l` ≠ unlimited",
     "set `* - memlock unlimited` in /etc/security/limits.d and, under Slurm, "
     "PropagateResourceLimitsExcept=MEMLOCK or LimitMEMLOCK=infinity for slurmd",
     "seed 000 Host validation / Expected results (memlock)", "host", "docs/host.md#rules"},
    check};

}  // namespace trainimg::host
