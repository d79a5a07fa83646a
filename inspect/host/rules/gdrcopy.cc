// SPDX-License-Identifier: GPL-3.0-or-later
// gdrcopy: seed 000 "Expected results", row GDRCopy (`gdrdrv` loaded,
// `/dev/gdrdrv` present).
#include "inspect/host/rules.h"

namespace trainimg::host {

const RuleInfo& gdrcopy_rule() {
  static const RuleInfo r{
      "gdrcopy",
      Severity::Error,
      "`gdrdrv` not loaded or `/dev/gdrdrv` missing",
      "sudo modprobe gdrdrv (the DLAMI ships it for its kernel); a kernel change leaves it "
      "without a matching module",
      "seed 000 Host validation / Expected results (GDRCopy)",
      "host"};
  return r;
}

void check_gdrcopy(const HostContext& c) {
  const auto& p = c.profile;
  if (!p.gdrdrv_loaded) {
    if (!c.cannot_tell(gdrcopy_rule(), "lsmod.txt"))
      c.report(gdrcopy_rule(), "cannot tell whether gdrdrv is loaded (" + c.probe_state("lsmod.txt") + ")");
  } else if (!*p.gdrdrv_loaded) {
    c.report(gdrcopy_rule(), "gdrdrv is not loaded (not in lsmod)");
  }
  if (!p.dev_gdrdrv) {
    if (!c.cannot_tell(gdrcopy_rule(), "dev-gdrdrv.txt"))
      c.report(gdrcopy_rule(),
               "cannot tell whether /dev/gdrdrv exists (" + c.probe_state("dev-gdrdrv.txt") + ")");
  } else if (!*p.dev_gdrdrv) {
    c.report(gdrcopy_rule(), "/dev/gdrdrv is missing (" + c.probe_state("dev-gdrdrv.txt") + ")");
  }
}

}  // namespace trainimg::host
