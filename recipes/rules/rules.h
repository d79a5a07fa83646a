// SPDX-License-Identifier: GPL-3.0-or-later
// The Dockerfile rules, one file each, listed once in rules.def (no static
// self-registration: the linker would drop unreferenced objects).
#pragma once

#include "recipes/rules/rule.h"

namespace trainimg::recipes::rules {

#define DOCKERFILE_RULE(name) const Rule& name();
#include "recipes/rules/rules.def"
#undef DOCKERFILE_RULE

}  // namespace trainimg::recipes::rules
