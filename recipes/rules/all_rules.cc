// SPDX-License-Identifier: GPL-3.0-or-later
#include "recipes/rules/rules.h"

namespace trainimg::recipes::rules {

const std::vector<const Rule*>& all_rules() {
  // Catalogue order of domain.md §6 (rules.def).
  static const std::vector<const Rule*> kAll = {
#define DOCKERFILE_RULE(name) &name(),
#include "recipes/rules/rules.def"
#undef DOCKERFILE_RULE
  };
  return kAll;
}

}  // namespace trainimg::recipes::rules
