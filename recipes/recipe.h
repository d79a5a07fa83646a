// SPDX-License-Identifier: GPL-3.0-or-later
// Recipes: a declarative YAML description of a training image (NGC base +
// EFA installer + build steps + user code), validated with positions and
// rendered to the Dockerfile seed 002 prescribes. docs/recipes.md is the
// schema reference.
#pragma once

#include <string>
#include <vector>

#include "common/diagnostic.h"

namespace trainimg::recipes {

struct LintOptions;  // recipes/lint.h

/// A column range of a rendered line that one recipe node produced.
struct SourceSpan {
  int from = 0;      ///< first rendered column (1-based)
  int to = 0;        ///< one past the last rendered column
  std::string file;  ///< recipe path, or "--set KEY" for an override
  int line = 0;      ///< 1-based position of the node (0: none)
  int column = 0;
  /// The node's text was copied verbatim: rendered column from + i is
  /// recipe column column + i. Otherwise every column maps to the node.
  bool verbatim = false;
  int length = 0;  ///< columns of the node's text (caret range)
};

/// Where one rendered Dockerfile line came from in the recipe: the node
/// that produced the line as a whole, and finer spans inside it.
struct SourceMapEntry {
  std::string file;
  int line = 0;  ///< 0 for generated lines (header, blank lines)
  int column = 0;
  int length = 0;
  std::vector<SourceSpan> spans;
};

struct RenderResult {
  /// The Dockerfile; empty whenever `diagnostics` holds an error.
  std::string dockerfile;
  /// Validation errors, refusals and lint findings, all positioned in the
  /// recipe (or in "--set KEY" for overrides); sorted.
  std::vector<Diagnostic> diagnostics;
  /// source_map[i] describes rendered line i + 1.
  std::vector<SourceMapEntry> source_map;
};

/// Loads `path`, applies `set_overrides` ("dotted.key=YAML value", in
/// order), validates, renders, and lints the rendered Dockerfile with the
/// default options, mapping every finding back to the recipe. Throws
/// trainimg::Error when the file is unreadable or is not YAML, or an
/// override is not KEY=VALUE (stopping failures: exit 2).
RenderResult render_recipe_file(const std::string& path, const std::vector<std::string>& set_overrides);

/// As render_recipe_file, for recipe text already in memory (`name` is what
/// diagnostics and the header comment call it; copy sources are checked
/// relative to `context_dir`).
RenderResult render_recipe_text(const std::string& name, const std::string& text,
                                const std::vector<std::string>& set_overrides,
                                const std::string& context_dir);

/// What `trainimg lint RECIPE.yaml` reports: validation errors, refusals,
/// and the rendered Dockerfile's lint findings (with `opt`), positioned in
/// the recipe. Throws trainimg::Error as render_recipe_file does.
std::vector<Diagnostic> lint_recipe_file(const std::string& path, const LintOptions& opt);

/// Rules only recipes have (kind "recipe"): recipe-syntax, recipe-schema,
/// recipe-efa-flags. Everything else is found by the Dockerfile rules on
/// the rendered text, under their ids (domain.md §6).
const std::vector<RuleInfo>& recipe_rules();

}  // namespace trainimg::recipes
