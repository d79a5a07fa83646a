// SPDX-License-Identifier: GPL-3.0-or-later
// Rules that need the recipe model: what a recipe's YAML says that its
// rendering cannot show. Everything else a recipe is judged by comes from
// linting the rendered Dockerfile, positions mapped back (lint_recipe.cc).
// One rule per file; check_recipe (all_checks.cc) runs them all.
#pragma once

#include <vector>

#include "common/diagnostic.h"
#include "recipes/recipe/model.h"

namespace trainimg::recipes {

using Findings = std::vector<Diagnostic>;

/// recipe-efa-flags (efa_flags.cc): each `efa.flags` entry is an
/// efa_installer.sh option that a container install can take, and not one
/// of the container flags the renderer always passes.
const RuleInfo& recipe_efa_flags_rule();
void check_efa_flags(const Recipe& r, Findings& out);

/// Every check above, in that order.
Findings check_recipe(const Recipe& r);

}  // namespace trainimg::recipes
