// SPDX-License-Identifier: GPL-3.0-or-later
#include "cmd/cli/cli.h"
#include "common/policy/policy.h"
#include "inspect/host.h"
#include "inspect/host/fleet.h"
#include "inspect/inspect.h"
#include "recipes/recipes.h"

namespace trainimg::cmd {

std::vector<RuleInfo> rule_catalogue() {
  std::vector<RuleInfo> out;
  auto add = [&out](const std::vector<RuleInfo>& rules) {
    out.insert(out.end(), rules.begin(), rules.end());
  };
  add(recipes::lint_rules());
  add({recipes::dockerfile_syntax_rule()});
  add(recipes::recipe_rules());
  add(inspect::image_rules());
  add(host::host_rules());
  add(host::fleet_only_rules());
  add(policy::policy_rules());
  return out;
}

std::vector<std::string> rule_kinds() {
  return {"dockerfile", "recipe", "image", "host", "fleet", "policy"};
}

namespace {

// A table cell: '|' would end the cell.
std::string cell(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '|') out += '\\';
    out += c;
  }
  return out;
}

}  // namespace

std::string rules_markdown(const std::vector<RuleInfo>& rules) {
  std::string out = "| id | severity | fires when | fix |\n| --- | --- | --- | --- |\n";
  for (const auto& r : rules)
    out += "| `" + r.id + "` | " + std::string(to_string(r.severity)) + " | " + cell(r.summary) + " | " +
           cell(r.fix) + " |\n";
  return out;
}

}  // namespace trainimg::cmd
