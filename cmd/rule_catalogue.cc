// SPDX-License-Identifier: GPL-3.0-or-later
#include "cmd/rule_catalogue.h"

#include "inspect/inspect.h"
#include "recipes/lint.h"
#include "recipes/recipe.h"

#include "inspect/host/fleet.h"
#include "inspect/host/rules.h"

namespace trainimg::cmd {

std::vector<RuleInfo> rule_catalogue() {
  std::vector<RuleInfo> out;
  auto add = [&out](const std::vector<RuleInfo>& rules) { out.insert(out.end(), rules.begin(), rules.end()); };
  (void)add;
  add(recipes::lint_rules());
  add(recipes::recipe_rules());
  add(inspect::image_rules());
  add(host::host_rules());
  add({host::fleet_drift_rule(), host::node_unreachable_rule()});
  return out;
}

}  // namespace trainimg::cmd
