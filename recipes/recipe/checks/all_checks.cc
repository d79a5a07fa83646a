// SPDX-License-Identifier: GPL-3.0-or-later
#include "recipes/recipe/checks/checks.h"

namespace trainimg::recipes {

const std::vector<const RecipeCheck*>& all_checks() {
  static const std::vector<const RecipeCheck*> kAll = {
#define RECIPE_CHECK(name) &name(),
#include "recipes/recipe/checks/checks.def"
#undef RECIPE_CHECK
  };
  return kAll;
}

Findings check_recipe(const Recipe& r) {
  Findings out;
  for (const auto* c : all_checks()) c->check(c->info, r, out);
  return out;
}

}  // namespace trainimg::recipes
