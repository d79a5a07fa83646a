// SPDX-License-Identifier: GPL-3.0-or-later
// The policy flags every checking command shares, over recipes/policy/.
#include <filesystem>
#include <iostream>

#include "cmd/command.h"
#include "cmd/rule_catalogue.h"
#include "common/atomic_file.h"
#include "common/error.h"

namespace trainimg::cmd {

void add_policy_flags(CLI::App& sub, const std::shared_ptr<PolicyFlags>& f, bool baseline_flag) {
  sub.add_option(
      "--config", f->config,
      "Policy file (docs/policy.md); default: the nearest .trainimg.yaml in this directory or a parent, "
      "up to the repository root");
  sub.add_flag("--no-config", f->no_config, "Use no policy file");
  if (baseline_flag)
    sub.add_option("--baseline", f->baseline,
                   "Accepted findings (trainimg.baseline/v1): report and fail only on new ones");
  sub.add_option("--write-baseline", f->write_baseline,
                 "Record today's findings as a trainimg.baseline/v1 file and exit 0");
  sub.add_flag("--show-suppressed", f->show_suppressed, "List the findings policy hid, and why");
}

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
