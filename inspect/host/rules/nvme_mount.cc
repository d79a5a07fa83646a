// SPDX-License-Identifier: GPL-3.0-or-later
// nvme-mount: seed 000 "Expected results", row Local NVMe (`/opt/dlami/nvme`
// mounted; container image cache and scratch live there).
#include "inspect/host/rules.h"

namespace trainimg::host {

namespace {

void check(const RuleInfo& rule, const HostContext& c) {
  const auto& m = c.profile.nvme_mounted;
  if (!m) {
    if (!c.cannot_tell(rule, "df-nvme.txt"))
      c.add(Finding(rule,
                    "cannot tell whether /opt/dlami/nvme is mounted (" + c.probe_state("df-nvme.txt") + ")")
                .in(c.file));
  } else if (!*m) {
    const auto& rec = c.profile.probes.find("df-nvme.txt");
    std::string why = c.probe_state("df-nvme.txt");
    if (rec != c.profile.probes.end() && rec->second.parsed.is_object() &&
        rec->second.parsed.contains("mounted_on"))
      why = "df shows it on " + rec->second.parsed["mounted_on"].get<std::string>();
    c.add(Finding(rule, "/opt/dlami/nvme is not a mount point (" + why + ")").in(c.file));
  }
}

}  // namespace

const HostRule kNvmeMount{
    {"nvme-mount", Severity::Warning, "`/opt/dlami/nvme` is not a mount point",
     "check the DLAMI's LVM auto-mount of the local NVMe drives (journalctl -b | grep nvme); "
     "Enroot's cache and data should live there",
     "seed 000 Host validation / Expected results (Local NVMe)", "host", "docs/host.md#rules"},
    check};

}  // namespace trainimg::host
