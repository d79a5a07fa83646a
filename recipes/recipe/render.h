// SPDX-License-Identifier: GPL-3.0-or-later
// Recipe → Dockerfile in seed 002's layout, with a source map from each
// rendered line (and column range) back to the recipe node behind it.
#pragma once

#include <string>
#include <vector>

#include "common/diagnostic.h"
#include "recipes/recipe/model.h"
#include "recipes/recipes.h"

namespace trainimg::recipes {

struct Rendered {
  std::string text;
  std::vector<SourceMapEntry> map;  ///< map[i] is rendered line i + 1
};

/// Renders a validated recipe. Deterministic: the same recipe (and the
/// same overrides) gives byte-identical output.
Rendered render_dockerfile(const Recipe& r);

/// Problems only the renderer can see in `run` text (a trailing `#`
/// comment would swallow the commands joined after it), as recipe-schema
/// errors positioned in the recipe.
std::vector<Diagnostic> check_run_text(const Recipe& r);

/// Maps rendered (line, column) to the recipe: fills file/line/column/
/// length of `d` from the source map. Returns false when the line has no
/// recipe position.
bool map_to_recipe(const std::vector<SourceMapEntry>& map, Diagnostic& d);
/// The same for a related location of a finding.
bool map_to_recipe(const std::vector<SourceMapEntry>& map, RelatedLocation& r);

/// Quotes a Dockerfile ENV/ARG/LABEL value when it needs it ("a b", "").
std::string dockerfile_word(const std::string& v);

}  // namespace trainimg::recipes
