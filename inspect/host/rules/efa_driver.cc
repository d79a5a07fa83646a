// SPDX-License-Identifier: GPL-3.0-or-later
// efa-driver: seed 000 "Expected results", row EFA driver ("Version shown by
// modinfo efa"; P6-B200: 3.3.0 or higher). With --baseline, the EFA
// installer's components are compared too (seed 000: every node must share one
// environment).
#include "common/version.h"
#include "inspect/host/rules.h"

namespace trainimg::host {

namespace {

void check(const RuleInfo& rule, const HostContext& c) {
  const auto& v = c.profile.efa_driver_version;
  if (!v) {
    if (!c.cannot_tell(rule, "modinfo-efa.txt"))
      c.add(Finding(rule, "modinfo efa shows no version (" + c.probe_state("modinfo-efa.txt") + ")")
                .in(c.file));
  } else {
    if (c.expect.efa_driver_min && compare_versions(*v, *c.expect.efa_driver_min) < 0)
      c.add(
          Finding(rule, "EFA driver " + *v + " is below the minimum " + *c.expect.efa_driver_min).in(c.file));
    if (c.expect.efa_driver && !same_release(*v, *c.expect.efa_driver) && *v != *c.expect.efa_driver)
      c.add(Finding(rule, "EFA driver " + *v + " ≠ expected " + *c.expect.efa_driver).in(c.file));
  }
  if (c.baseline) {
    const auto& b = *c.baseline;
    c.drift(rule, "EFA driver", v, b.efa_driver_version);
    c.drift(rule, "EFA installer", c.profile.efa_installer_version, b.efa_installer_version);
    c.drift(rule, "libfabric", c.profile.libfabric_version, b.libfabric_version);
    c.drift(rule, "aws-ofi-nccl", c.profile.ofi_nccl_version, b.ofi_nccl_version);
    c.drift(rule, "Open MPI 4", c.profile.openmpi4_version, b.openmpi4_version);
    c.drift(rule, "Open MPI 5", c.profile.openmpi5_version, b.openmpi5_version);
  }
}

}  // namespace

const HostRule kEfaDriver{
    {"efa-driver", Severity::Error,
     "`modinfo efa` has no version, below `efa-driver>=`, ≠ `efa-driver=`, or (with `--baseline`) the EFA "
     "driver/installer/libfabric/aws-ofi-nccl/Open MPI drifted",
     "use a DLAMI build whose EFA kernel module matches the running kernel; do not upgrade "
     "the kernel (modules are built for it)",
     "seed 000 Host validation / Expected results (EFA driver)", "host", "docs/host.md#rules"},
    check};

}  // namespace trainimg::host
