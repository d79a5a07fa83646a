// SPDX-License-Identifier: GPL-3.0-or-later
// The Dockerfile rules, one file each; all_rules.cc lists them explicitly
// (no static self-registration: the linker would drop unreferenced objects).
#pragma once

#include "recipes/rules/rule.h"

namespace trainimg::recipes::rules {

const Rule& efa_apt_update();
const Rule& efa_container_flags();
const Rule& efa_disable_ngc();
const Rule& efa_version_pin();
const Rule& efa_ld_library_path();
const Rule& nccl_net_plugin();
const Rule& nccl_ib_settings();
const Rule& mpi_second_install();
const Rule& host_library_mount();

}  // namespace trainimg::recipes::rules
