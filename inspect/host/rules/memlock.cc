// SPDX-License-Identifier: GPL-3.0-or-later
// memlock: seed 000 "Expected results", row memlock = unlimited (collective
// libraries pin large amounts of memory).
#include "inspect/host/rules.h"

namespace trainimg::host {

const RuleInfo& memlock_rule() {
  static const RuleInfo r{"memlock",
                          Severity::Error,
                          "`ulimit -l` ≠ unlimited",
                          "set `* - memlock unlimited` in /etc/security/limits.d and, under Slurm, "
                          "PropagateResourceLimitsExcept=MEMLOCK or LimitMEMLOCK=infinity for slurmd",
                          "seed 000 Host validation / Expected results (memlock)",
                          "host",
                          "docs/host.md#rules"};
  return r;
}

void check_memlock(const HostContext& c) {
  const auto& m = c.profile.memlock;
  if (!m) {
    if (!c.cannot_tell(memlock_rule(), "ulimit-l.txt"))
      c.add(Finding(memlock_rule(), "cannot read the memlock limit (" + c.probe_state("ulimit-l.txt") + ")")
                .in(c.file));
  } else if (*m != "unlimited")
    c.add(Finding(memlock_rule(), "memlock limit is " + *m + " KiB, expected unlimited").in(c.file));
}

}  // namespace trainimg::host
