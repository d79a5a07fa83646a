// SPDX-License-Identifier: GPL-3.0-or-later
// Refusals a recipe's structure shows before anything is rendered: env,
// apt and installer flags, each finding on the exact YAML node. One rule per
// file; check_recipe (all_checks.cc) runs them all. Rules about `run` text
// come from linting the rendered Dockerfile (lint_recipe.cc).
#pragma once

#include <vector>

#include "common/diagnostic.h"
#include "recipes/recipe/model.h"

namespace trainimg::recipes {

using Findings = std::vector<Diagnostic>;

void check_nccl_net_plugin(const Recipe& r, Findings& out);     // nccl_net_plugin.cc
void check_nccl_ib_settings(const Recipe& r, Findings& out);    // nccl_ib_settings.cc
void check_ld_library_path(const Recipe& r, Findings& out);     // ld_library_path.cc
void check_mpi_second_install(const Recipe& r, Findings& out);  // mpi_second_install.cc
void check_installer_flags(const Recipe& r, Findings& out);     // efa_flags.cc

/// Every check above, in that order.
Findings check_recipe(const Recipe& r);

/// Calls f(step, env) for each env entry of each step, in order.
template <class F>
void for_each_env(const Recipe& r, F&& f) {
  for (const auto& s : r.steps)
    for (const auto& e : s.env) f(s, e);
}

}  // namespace trainimg::recipes
