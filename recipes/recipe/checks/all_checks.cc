// SPDX-License-Identifier: GPL-3.0-or-later
#include "recipes/recipe/checks/checks.h"

namespace trainimg::recipes {

Findings check_recipe(const Recipe& r) {
  Findings out;
  check_efa_flags(r, out);
  return out;
}

}  // namespace trainimg::recipes
