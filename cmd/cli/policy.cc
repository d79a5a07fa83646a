// SPDX-License-Identifier: GPL-3.0-or-later
// The policy flags every checking command shares (add_report_flags), over common/policy/.
#include <filesystem>
#include <iostream>

#include "cmd/cli/cli.h"
#include "common/atomic_file.h"
#include "common/error.h"

namespace trainimg::cmd {

policy::Policy load_policy(const PolicyFlags& f) {
  if (f.no_config && !f.config.empty())
    throw Error("--no-config", "give --config FILE or --no-config, not both");
  if (f.no_config) return {};
  std::string path = f.config;
  if (path.empty()) {
    std::string found = policy::find_config(".");
    if (found.empty()) return {};
    // Named relative to the working directory, as a clickable position.
    std::error_code ec;
    auto rel = std::filesystem::relative(found, std::filesystem::current_path(ec), ec);
    path = ec || rel.empty() ? found : rel.string();
  }
  return policy::load_policy(path, rule_catalogue());
}

FailOn resolve_fail_on(const std::string& flag, const policy::Policy& p) {
  if (!flag.empty()) return parse_fail_on(flag);
  return p.fail_on.value_or(FailOn::Error);
}

bool apply_policy_flags(Report& r, const PolicyFlags& f, const policy::Policy& p,
                        const policy::Sources* sources) {
  if (!f.baseline.empty() && !f.write_baseline.empty())
    throw Error("--write-baseline", "give --baseline FILE or --write-baseline FILE, not both");
  // Read before anything is applied: a bad baseline stops with no report.
  std::optional<policy::Baseline> base;
  if (!f.baseline.empty()) base = policy::read_baseline(f.baseline);
  policy::apply_policy(r, p, policy::today_utc());
  r.show_suppressed = f.show_suppressed;
  if (!f.write_baseline.empty()) {
    write_file_atomic(f.write_baseline, policy::baseline_json(r, sources));
    std::cerr << "trainimg: wrote " << r.findings.size() << " finding" << (r.findings.size() == 1 ? "" : "s")
              << " to the baseline " << f.write_baseline << "\n";
    return true;
  }
  if (base) policy::apply_baseline(r, *base, sources);
  return false;
}

}  // namespace trainimg::cmd
