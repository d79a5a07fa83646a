// SPDX-License-Identifier: GPL-3.0-or-later
// gdrcopy: seed 000 "Expected results", row GDRCopy (`gdrdrv` loaded,
// `/dev/gdrdrv` present).
#include "inspect/host/rules.h"

namespace trainimg::host {

namespace {

void check(const RuleInfo& rule, const HostContext& c) {
  const auto& p = c.profile;
  if (!p.gdrdrv_loaded) {
    if (!c.cannot_tell(rule, "lsmod.txt"))
      c.add(Finding(rule, "cannot tell whether gdrdrv is loaded (" + c.probe_state("lsmod.txt") + ")")
                .in(c.file));
  } else if (!*p.gdrdrv_loaded) {
    c.add(Finding(rule, "gdrdrv is not loaded (not in lsmod)").in(c.file));
  }
  if (!p.dev_gdrdrv) {
    if (!c.cannot_tell(rule, "dev-gdrdrv.txt"))
      c.add(Finding(rule, "cannot tell whether /dev/gdrdrv exists (" + c.probe_state("dev-gdrdrv.txt") + ")")
                .in(c.file));
  } else if (!*p.dev_gdrdrv) {
    c.add(Finding(rule, "/dev/gdrdrv is missing (" + c.probe_state("dev-gdrdrv.txt") + ")").in(c.file));
  }
}

}  // namespace

const HostRule kGdrcopy{
    {"gdrcopy", Severity::Error, "`gdrdrv` not loaded or `/dev/gdrdrv` missing",
     "sudo modprobe gdrdrv (the DLAMI ships it for its kernel); a kernel change leaves it "
     "without a matching module",
     "seed 000 Host validation / Expected results (GDRCopy)", "host", "docs/host.md#rules"},
    check};

}  // namespace trainimg::host
