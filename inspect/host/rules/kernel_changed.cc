// SPDX-License-Identifier: GPL-3.0-or-later
// kernel-changed: seed 000 "Do not upgrade the kernel": the running kernel
// must be the AMI's, and the kernel packages must stay held.
#include "inspect/host/rules.h"

namespace trainimg::host {

namespace {

void check(const RuleInfo& rule, const HostContext& c) {
  const auto& p = c.profile;
  if (!p.kernel) {
    if (!c.cannot_tell(rule, "uname-r.txt"))
      c.add(
          Finding(rule, "cannot read the running kernel (" + c.probe_state("uname-r.txt") + ")").in(c.file));
  } else {
    if (c.expect.kernel && *p.kernel != *c.expect.kernel)
      c.add(
          Finding(rule, "running kernel " + *p.kernel + " ≠ the AMI kernel " + *c.expect.kernel).in(c.file));
    if (c.baseline) c.drift(rule, "running kernel", p.kernel, c.baseline->kernel);
    if (!c.expect.kernel && !c.baseline)
      c.note("kernel-changed: running " + *p.kernel + "; pass --expect kernel=K or --baseline to compare");
  }
  if (!p.kernel_held)
    c.note("kernel-changed: cannot tell whether kernel packages are held (" +
           c.probe_state("apt-mark-showhold.txt") + ")");
  else if (!*p.kernel_held)
    c.add(Finding(rule, "kernel packages are not held (apt-mark showhold lists no linux-image*/linux-aws*)")
              .in(c.file));
}

}  // namespace

const HostRule kKernelChanged{
    {"kernel-changed", Severity::Error,
     "`uname -r` ≠ `kernel=` or the baseline's kernel, or no kernel package is held",
     "boot the AMI's kernel and `sudo apt-mark hold` the linux-image/linux-aws packages; for a "
     "security fix move to a new DLAMI build instead of upgrading the kernel",
     "seed 000 Do not upgrade the kernel", "host", "docs/host.md#rules"},
    check};

}  // namespace trainimg::host
