// SPDX-License-Identifier: GPL-3.0-or-later
// fabric-manager: seed 000 "Expected results", row Fabric Manager = active.
#include "inspect/host/rules.h"

namespace trainimg::host {

namespace {

void check(const RuleInfo& rule, const HostContext& c) {
  const auto& state = c.profile.fabric_manager;
  if (!state) {
    if (c.cannot_tell(rule, "fabricmanager.txt")) return;
    c.add(Finding(rule, "cannot tell whether nvidia-fabricmanager is active (" +
                            c.probe_state("fabricmanager.txt") + ")")
              .in(c.file));
    return;
  }
  if (*state != "active")
    c.add(Finding(rule, "nvidia-fabricmanager is " + *state + ", expected active").in(c.file));
}

}  // namespace

const HostRule kFabricManager{
    {"fabric-manager", Severity::Error, "`systemctl is-active nvidia-fabricmanager` ≠ active",
     "sudo systemctl enable --now nvidia-fabricmanager; without it the NVLink path of "
     "multi-GPU collectives is not established",
     "seed 000 Host validation / What each command checks (nvidia-fabricmanager)", "host",
     "docs/host.md#rules"},
    check};

}  // namespace trainimg::host
