// SPDX-License-Identifier: GPL-3.0-or-later
#include "recipes/recipe/checks/checks.h"
#include "recipes/recipe/load.h"

namespace trainimg::recipes {

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
