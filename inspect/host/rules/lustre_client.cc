// SPDX-License-Identifier: GPL-3.0-or-later
// lustre-client: seed 000 "When using FSx for Lustre" (`lfs --version`).
#include "inspect/host/rules.h"

namespace trainimg::host {

namespace {

void check(const RuleInfo& rule, const HostContext& c) {
  if (!c.lustre_in_use()) {
    c.note("lustre-client: not checked (Lustre not in use; pass --expect lustre=yes to require it)");
    return;
  }
  // No "cannot tell" here: with Lustre in use, a missing `lfs` is exactly
  // what this rule reports.
  if (!c.profile.lustre_version)
    c.add(Finding(rule, "Lustre is in use but `lfs --version` gave no version (" +
                            c.probe_state("lfs-version.txt") + ")")
              .in(c.file));
  if (c.baseline) c.drift(rule, "Lustre client", c.profile.lustre_version, c.baseline->lustre_version);
}

}  // namespace

const HostRule kLustreClient{
    {"lustre-client", Severity::Warning,
     "Lustre in use (`lustre=yes`, a lustre mount, the lustre module, LNet EFA, the FSx EFA service) and "
     "`lfs --version` gives nothing (a missing `lfs` is this rule's finding, not \"cannot tell\")",
     "install the Lustre client built for the running kernel (the DLAMI ships one); a kernel "
     "change leaves it without modules",
     "seed 000 Host validation (When using FSx for Lustre)", "host", "docs/host.md#rules"},
    check};

}  // namespace trainimg::host
