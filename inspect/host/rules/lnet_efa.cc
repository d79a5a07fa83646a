// SPDX-License-Identifier: GPL-3.0-or-later
// lnet-efa: seed 004 §2 (`lnetctl net show --net efa`: one `nid: …@efa` per
// EFA interface, each `status: up`; configure-efa-fsx-lustre-client active).
#include "inspect/host/rules.h"

namespace trainimg::host {

namespace {

void check(const RuleInfo& rule, const HostContext& c) {
  const auto& p = c.profile;
  bool wanted = c.expect.lnet_efas.has_value() || c.lustre_in_use();
  if (!wanted) {
    c.note("lnet-efa: not checked (Lustre not in use; pass --expect lustre=yes or lnet-efas=N)");
    return;
  }
  if (!p.lnet_efa_count) {
    if (!c.cannot_tell(rule, "lnetctl-efa.txt"))
      c.add(Finding(rule, "cannot read LNet EFA interfaces (" + c.probe_state("lnetctl-efa.txt") + ")")
                .in(c.file));
  } else {
    int n = *p.lnet_efa_count;
    std::optional<int> want = c.expect.lnet_efas ? c.expect.lnet_efas : c.expect.efas;
    if (!want) want = p.efa_device_count;
    if (n == 0)
      c.add(
          Finding(rule, "LNet has no EFA interface (no `nid: …@efa`): FSx traffic goes over TCP").in(c.file));
    else if (want && n != *want)
      c.add(Finding(rule, std::to_string(n) + " LNet @efa interfaces, expected " + std::to_string(*want))
                .in(c.file));
    if (n > 0 && p.lnet_efa_up.value_or(0) != n)
      c.add(Finding(rule, std::to_string(n - p.lnet_efa_up.value_or(0)) + " of " + std::to_string(n) +
                              " LNet @efa interfaces are not `status: up`")
                .in(c.file));
  }
  if (!p.efa_fsx_service && c.cannot_tell(rule, "efa-fsx-service.txt")) return;
  if (p.efa_fsx_service.value_or("") != "active")
    c.add(Finding(rule,
                  "configure-efa-fsx-lustre-client.service is " +
                      p.efa_fsx_service.value_or("unknown (" + c.probe_state("efa-fsx-service.txt") + ")") +
                      ", expected active")
              .in(c.file));
}

}  // namespace

const HostRule kLnetEfa{
    {"lnet-efa", Severity::Error,
     "(Lustre in use or `lnet-efas=`) the LNet @efa count ≠ expected (`lnet-efas=`, else `efas=`, else the "
     "rdmap count), an interface not `up`, or the configure-efa-fsx-lustre-client service not active; in "
     "`gds check` also no interface carrying traffic after a GDS run (largest send+recv increase < 1000 "
     "messages)",
     "run the FSx client's `sudo ./setup.sh --optimized-for-gds`, then remount; check "
     "journalctl -u configure-efa-fsx-lustre-client.service",
     "seed 004 §2 Verify the FSx client EFA configuration", "host", "docs/host.md#rules"},
    check};

}  // namespace trainimg::host
