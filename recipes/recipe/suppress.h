// SPDX-License-Identifier: GPL-3.0-or-later
// `# trainimg: ignore=ID[,ID]` in a recipe: a YAML comment on the line
// before a finding's line, or at the end of that line, silences those rule
// ids there (as the Dockerfile pragma does for the next instruction).
// Schema and syntax errors cannot be silenced: the recipe would not render.
#pragma once

#include <vector>

#include "common/diagnostic.h"
#include "common/source_file.h"

namespace trainimg::recipes {

/// Removes the findings in `src` that a pragma silences.
void apply_recipe_suppressions(const SourceFile& src, std::vector<Diagnostic>& findings);

}  // namespace trainimg::recipes
