// SPDX-License-Identifier: GPL-3.0-or-later
// fleet check's results as an Outcome of the report path: the policy is
// applied per node, the four fleet renderings.
#include <unistd.h>

#include <iostream>

#include "builder/slurm/slurm.h"
#include "cmd/cli/cli.h"
#include "inspect/host/fleet.h"

namespace trainimg::cmd {

FleetOutcome::FleetOutcome(host::FleetResult r) : result(std::move(r)) {}

bool FleetOutcome::apply_policy(const policy::Policy& p, const PolicyFlags&) {
  // Per node, before the reports and the drain decision see the findings.
  std::string today = policy::today_utc();
  // The policy rules' findings (an expired ignore) are about the config, not
  // a node: said once, on stderr.
  std::vector<Diagnostic> about_config;
  for (auto& n : result.nodes) {
    Report nr;
    nr.rules = host::fleet_rules();
    nr.findings = std::move(n.findings);
    policy::apply_policy(nr, p, today);
    n.findings.clear();
    for (auto& d : nr.findings) {
      if (!policy::is_policy_rule(d.rule_id))
        n.findings.push_back(std::move(d));
      else if (&n == &result.nodes.front())
        about_config.push_back(std::move(d));
    }
  }
  for (const auto& d : about_config) std::cerr << render_diagnostic(d, want_color(STDERR_FILENO));
  return false;
}

std::string FleetOutcome::render(Format format, bool) const {
  switch (format) {
    case Format::Json: return host::render_fleet_json(result);
    case Format::Junit: return host::render_fleet_junit(result);
    case Format::Sarif: return host::render_fleet_sarif(result);
    case Format::Text: break;
  }
  return host::render_fleet_text(result);
}

int FleetOutcome::exit_code(FailOn fail_on) const {
  Report all;
  for (const auto& n : result.nodes)
    all.findings.insert(all.findings.end(), n.findings.begin(), n.findings.end());
  return trainimg::exit_code(all, fail_on);
}

void FleetOutcome::finish() {
  if (!drain) return;
  for (const auto& n : result.nodes) {
    if (n.state != "ok") continue;  // no task ran there: nothing judged, nothing to drain for
    std::string reason = host::drain_reason(n);
    if (reason.empty()) continue;
    auto d = builder::drain_node(n.node, reason);
    std::cerr << "trainimg: "
              << (d.drained ? "drained " + n.node + ": " + reason : "did not drain " + n.node + ": " + d.why)
              << "\n";
  }
}

}  // namespace trainimg::cmd
