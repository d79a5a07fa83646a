// SPDX-License-Identifier: GPL-3.0-or-later
#include "recipes/recipe/checks/checks.h"

#include "recipes/recipe/load.h"

namespace trainimg::recipes {

Diagnostic finding_at(const Text& t, Severity sev, const char* rule, std::string message, std::string hint,
                      const char* seed) {
  Diagnostic d = diagnostic_at(t.where, sev, rule, std::move(message), std::move(hint), t.length);
  d.seed = seed;
  return d;
}

Findings check_recipe(const Recipe& r) {
  Findings out;
  check_nccl_net_plugin(r, out);
  check_nccl_ib_settings(r, out);
  check_ld_library_path(r, out);
  check_mpi_second_install(r, out);
  check_installer_flags(r, out);
  return out;
}

}  // namespace trainimg::recipes
