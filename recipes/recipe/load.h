// SPDX-License-Identifier: GPL-3.0-or-later
// Recipe YAML → Recipe model, with every schema problem as a positioned
// recipe-schema diagnostic (unknown keys with a suggestion, wrong shapes,
// bad versions and names, missing required keys).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "common/diagnostic.h"
#include "common/source_file.h"
#include "recipes/recipe/model.h"

namespace trainimg::recipes {

struct LoadResult {
  /// Absent when the document is not a mapping or required keys are
  /// missing; present (possibly partial) otherwise, so later checks can
  /// still report on what is there.
  std::optional<Recipe> recipe;
  std::vector<Diagnostic> diagnostics;
};

/// Parses `src`, applies `overrides` (see apply_overrides), validates.
/// `context_dir` is the build context (the recipe's directory) against
/// which copy sources are checked; empty skips that check. Throws
/// trainimg::Error for malformed YAML or an override without '='.
LoadResult load_recipe(const SourceFile& src, const std::vector<std::string>& overrides,
                       const std::string& context_dir);

/// The rules only recipes have (lint_recipe.cc): the YAML is malformed, or
/// a key, value or --set override breaks the schema.
const RuleInfo& recipe_syntax_rule();
const RuleInfo& recipe_schema_rule();

}  // namespace trainimg::recipes
