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

/// A recipe-schema error (or other rule) at `w`.
Diagnostic diagnostic_at(const Where& w, Severity sev, std::string rule, std::string message, std::string hint,
                         int length = 0);

}  // namespace trainimg::recipes
