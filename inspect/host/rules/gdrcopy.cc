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
      "host",
      "docs/host.md#rules"};
  return r;
}

void check_gdrcopy(const HostContext& c) {
  const auto& p = c.profile;
  if (!p.gdrdrv_loaded) {
    if (!c.cannot_tell(gdrcopy_rule(), "lsmod.txt"))
      c.add(
          Finding(gdrcopy_rule(), "cannot tell whether gdrdrv is loaded (" + c.probe_state("lsmod.txt") + ")")
              .in(c.file));
  } else if (!*p.gdrdrv_loaded) {
    c.add(Finding(gdrcopy_rule(), "gdrdrv is not loaded (not in lsmod)").in(c.file));
  }
  if (!p.dev_gdrdrv) {
    if (!c.cannot_tell(gdrcopy_rule(), "dev-gdrdrv.txt"))
      c.add(Finding(gdrcopy_rule(),
                    "cannot tell whether /dev/gdrdrv exists (" + c.probe_state("dev-gdrdrv.txt") + ")")
                .in(c.file));
  } else if (!*p.dev_gdrdrv) {
    c.add(Finding(gdrcopy_rule(), "/dev/gdrdrv is missing (" + c.probe_state("dev-gdrdrv.txt") + ")")
              .in(c.file));
  }
}

}  // namespace trainimg::host
