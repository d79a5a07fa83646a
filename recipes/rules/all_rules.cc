// SPDX-License-Identifier: GPL-3.0-or-later
#include "recipes/rules/rules.h"

namespace trainimg::recipes::rules {

const std::vector<const Rule*>& all_rules() {
  // Catalogue order of domain.md §6.
  static const std::vector<const Rule*> kAll = {
      &efa_apt_update(),      &efa_container_flags(), &efa_disable_ngc(),
      &efa_version_pin(),     &efa_ld_library_path(), &nccl_net_plugin(),
      &nccl_ib_settings(),    &mpi_second_install(),  &host_library_mount(),
  };
  return kAll;
}

}  // namespace trainimg::recipes::rules
