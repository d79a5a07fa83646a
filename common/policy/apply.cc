// SPDX-License-Identifier: GPL-3.0-or-later
// apply_policy: the one place where a config changes a finished Report.
#include <fnmatch.h>

#include <filesystem>
#include <set>

#include "common/policy/policy.h"
#include "common/policy/rules.h"

namespace trainimg::policy {

namespace fs = std::filesystem;

namespace {

bool glob(const std::string& pattern, const std::string& s) {
  if (s.empty()) return false;
  if (::fnmatch(pattern.c_str(), s.c_str(), 0) == 0) return true;
  // A directory matches everything under it: "vendor" and "vendor/".
  std::string dir = pattern;
  while (!dir.empty() && dir.back() == '/') dir.pop_back();
  return !dir.empty() && ::fnmatch((dir + "/*").c_str(), s.c_str(), 0) == 0;
}

// The forms `file` is matched in: as given, without "./", and relative to
// the config's directory (findings name files relative to the working
// directory; the config's globs are relative to where it lives).
std::vector<std::string> forms(const std::string& file, const std::string& root) {
  std::vector<std::string> out{file};
  fs::path p(file);
  std::string normal = p.lexically_normal().string();
  if (normal != file) out.push_back(normal);
  if (!root.empty() && file.find(':') == std::string::npos) {
    std::error_code ec;
    fs::path abs = fs::absolute(p, ec).lexically_normal();
    fs::path base = fs::absolute(root, ec).lexically_normal();
    if (!ec) {
      fs::path rel = abs.lexically_relative(base);
      if (!rel.empty() && *rel.begin() != "..") out.push_back(rel.string());
    }
  }
  return out;
}

}  // namespace

bool path_matches(const std::string& pattern, const std::string& file, const std::string& root) {
  for (const auto& f : forms(file, root))
    if (glob(pattern, f)) return true;
  return false;
}

namespace {

// Matches the finding's file or, for image findings, the path in the image.
bool finding_matches(const std::string& pattern, const Diagnostic& d, const std::string& root) {
  return path_matches(pattern, d.file, root) || (!d.path.empty() && path_matches(pattern, d.path, root));
}

}  // namespace

void apply_policy(Report& r, const Policy& p, const std::string& today) {
  if (p.file.empty()) return;
  std::set<std::string> evaluated;
  std::map<std::string, Severity> default_of;
  for (const auto& rule : r.rules) {
    evaluated.insert(rule.id);
    default_of.emplace(rule.id, rule.severity);
  }
  for (const auto& rule : policy_rules()) default_of.emplace(rule.id, rule.severity);

  // The policy rules first (expired ignores), so that `disable` and
  // `severity` apply to their findings too; a rule that fired is evaluated.
  for (const auto* rule : all_policy_rules()) {
    size_t before = r.findings.size();
    rule->check(rule->info, PolicyContext{r, p, today, evaluated});
    if (r.findings.size() > before && !evaluated.count(rule->info.id)) r.rules.push_back(rule->info);
  }

  std::vector<Diagnostic> kept;
  for (auto& d : r.findings) {
    auto hide = [&](std::string by, std::string reason, const Place& where) {
      r.suppressed.push_back({d, std::move(by), std::move(reason), where.location()});
    };
    bool hidden = false;
    for (const auto& [pattern, at] : p.exclude_paths)
      if (!hidden && !is_policy_rule(d.rule_id) && finding_matches(pattern, d, p.root)) {
        hide("exclude-paths", "matches " + pattern, at);
        hidden = true;
      }
    for (const auto& [id, at] : p.disable)
      if (!hidden && id == d.rule_id) {
        hide("disable", "rule disabled", at);
        hidden = true;
      }
    for (const auto& ig : p.ignores) {
      if (hidden || ig.id != d.rule_id) continue;
      if (!ig.until.empty() && ig.until < today) continue;
      if (!ig.path.empty() && !finding_matches(ig.path, d, p.root)) continue;
      hide("ignore", ig.reason + (ig.until.empty() ? "" : " (until " + ig.until + ")"), ig.at);
      hidden = true;
    }
    if (hidden) continue;
    // A rule's findings at its default severity take the override; those it
    // emits at another one on purpose (a host rule's "cannot tell" note)
    // keep theirs.
    auto it = p.severity.find(d.rule_id);
    auto def = default_of.find(d.rule_id);
    if (it != p.severity.end() && (def == default_of.end() || def->second == d.severity))
      d.severity = it->second.first;
    kept.push_back(std::move(d));
  }
  r.findings = std::move(kept);
  for (auto& rule : r.rules)
    if (auto it = p.severity.find(rule.id); it != p.severity.end()) rule.severity = it->second.first;
}

const std::vector<const PolicyRule*>& all_policy_rules() {
  static const std::vector<const PolicyRule*> kRules = {
#define POLICY_RULE(name) &name,
#include "common/policy/rules.def"
#undef POLICY_RULE
  };
  return kRules;
}

const std::vector<RuleInfo>& policy_rules() {
  static const std::vector<RuleInfo> kInfos = [] {
    std::vector<RuleInfo> out;
    for (const auto* rule : all_policy_rules()) out.push_back(rule->info);
    return out;
  }();
  return kInfos;
}

bool is_policy_rule(std::string_view rule_id) {
  for (const auto& rule : policy_rules())
    if (rule.id == rule_id) return true;
  return false;
}

}  // namespace trainimg::policy
