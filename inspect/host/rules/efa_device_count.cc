// SPDX-License-Identifier: GPL-3.0-or-later
// efa-device-count: seed 000 "Expected results" (`rdmap*` count = `fi_info`
// domain count = number of EFAs) and "When ConnectX-7 devices also appear"
// (mlx5_*/ibp* with link DOWN are normal and ignored).
#include "inspect/host/parsers.h"
#include "inspect/host/rules.h"

namespace trainimg::host {

namespace {

void check(const RuleInfo& rule, const HostContext& c) {
  const auto& p = c.profile;
  auto ib = parse_infiniband([&p] {
    std::string s;
    for (const auto& d : p.infiniband_devices) s += d + "\n";
    return s;
  }());
  if (!ib.connectx.empty()) {
    std::string names;
    for (const auto& n : ib.connectx) names += (names.empty() ? "" : ", ") + n;
    c.note("efa-device-count: ignored ConnectX-7 devices " + names +
           " (link DOWN is normal; NCCL selects EFA: `Using network Libfabric`, `provider is efa`)");
  }
  if (!p.efa_device_count) {
    if (c.cannot_tell(rule, "infiniband.txt")) return;
    c.add(Finding(rule, "cannot count rdmap* devices (" + c.probe_state("infiniband.txt") + ")").in(c.file));
    return;
  }
  int rdmap = *p.efa_device_count;
  if (!p.fi_info_domain_count) {
    if (c.cannot_tell(rule, "fi_info.txt")) return;
    c.add(Finding(rule, "libfabric lists no EFA domain: fi_info -p efa -t FI_EP_RDM " +
                            c.probe_state("fi_info.txt") + " (" + std::to_string(rdmap) + " rdmap* devices)")
              .in(c.file));
    return;
  }
  int domains = *p.fi_info_domain_count;
  if (rdmap != domains)
    c.add(Finding(rule, std::to_string(rdmap) + " rdmap* devices but " + std::to_string(domains) +
                            " fi_info EFA domains: libfabric does not see every device")
              .in(c.file));
  if (c.expect.efas) {
    if (rdmap != *c.expect.efas)
      c.add(Finding(rule, std::to_string(rdmap) + " rdmap* devices, expected " +
                              std::to_string(*c.expect.efas) + " EFAs")
                .in(c.file));
  } else if (rdmap == 0) {
    c.add(Finding(rule, "no EFA device (rdmap*) under /sys/class/infiniband").in(c.file));
  } else if (!c.baseline) {
    c.note("efa-device-count: " + std::to_string(rdmap) +
           " EFAs seen; pass --expect efas=N to check the count");
  }
  if (c.baseline) {
    auto count = [](const HostProfile& h) {
      return h.efa_device_count ? std::optional<std::string>(std::to_string(*h.efa_device_count))
                                : std::nullopt;
    };
    c.drift(rule, "EFA device count", count(p), count(*c.baseline));
  }
}

}  // namespace

const HostRule kEfaDeviceCount{
    {"efa-device-count", Severity::Error,
     "`rdmap*` count ≠ `fi_info -p efa -t FI_EP_RDM` domain count, ≠ `efas=N`, or 0 "
     "(ConnectX-7 `mlx5_*`/`ibp*` devices are ignored and listed in a note)",
     "check the instance's EFA interfaces (launch template) and the EFA driver; do not "
     "force NCCL_NET=IB onto the ConnectX-7 devices",
     "seed 000 Host validation / Expected results (EFA device count)", "host", "docs/host.md#rules"},
    check};

}  // namespace trainimg::host
