// SPDX-License-Identifier: GPL-3.0-or-later
// Rules that need the recipe model: what a recipe's YAML says that its
// rendering cannot show. Everything else a recipe is judged by comes from
// linting the rendered Dockerfile, positions mapped back (lint_recipe.cc).
// One rule per file, listed once in checks.def; check_recipe runs them all.
#pragma once

#include <vector>

#include "common/diagnostic.h"
#include "recipes/recipe/model.h"

namespace trainimg::recipes {

using Findings = std::vector<Diagnostic>;

/// A rule that judges the recipe model: its description and its check.
struct RecipeCheck {
  RuleInfo info;
  void (*check)(const RuleInfo& rule, const Recipe& r, Findings& out);
};

#define RECIPE_CHECK(name) const RecipeCheck& name();
#include "recipes/recipe/checks/checks.def"
#undef RECIPE_CHECK

/// Every check of checks.def, in that order.
const std::vector<const RecipeCheck*>& all_checks();

/// Runs every check.
Findings check_recipe(const Recipe& r);

}  // namespace trainimg::recipes
