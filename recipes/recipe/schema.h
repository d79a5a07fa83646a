// SPDX-License-Identifier: GPL-3.0-or-later
// The recipe schema as data: which keys each mapping accepts and what shape
// their values have. The loader checks unknown keys against it (with a "did
// you mean"), and --set walks it to refuse keys the recipe cannot have.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "common/yaml_schema.h"

namespace trainimg::recipes {

const std::vector<Field>& recipe_fields();  ///< the top-level mapping
const std::vector<Field>& efa_fields();
const std::vector<Field>& step_fields();
const std::vector<Field>& copy_fields();

}  // namespace trainimg::recipes
