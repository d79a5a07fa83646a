// SPDX-License-Identifier: GPL-3.0-or-later
// mpi-second-install: NGC ships its own Open MPI (/usr/local/mpi); another
// one from apt, or pointing the environment at the installer's
// /opt/amazon/openmpi, mixes the two (`opal_shmem_base_select failed` →
// `MPI_INIT failed`, seed 002 Pitfall ④). Only on an NGC base.
#include "recipes/recipe/checks/checks.h"
#include "recipes/recipe/load.h"
#include "recipes/rules/rules.h"

namespace trainimg::recipes {

namespace {

// Packages that install an Open MPI (Debian/Ubuntu and RPM names, the same
// list the Dockerfile rule uses), plus Debian's default-MPI metapackages,
// which pull one in. The name before any =VERSION or :ARCH counts.
bool is_open_mpi_package(std::string name) {
  static const char* kNames[] = {"openmpi-bin",    "libopenmpi-dev",  "openmpi-common", "libopenmpi3",
                                 "libopenmpi3t64", "libopenmpi40",    "openmpi",        "openmpi-devel",
                                 "openmpi5",       "mpi-default-bin", "mpi-default-dev"};
  name = name.substr(0, name.find_first_of("=:"));
  for (const char* n : kNames)
    if (name == n) return true;
  return false;
}

bool names_amazon_openmpi(const std::string& value) {
  size_t start = 0;
  while (start <= value.size()) {
    size_t e = value.find(':', start);
    std::string part = value.substr(start, e == std::string::npos ? std::string::npos : e - start);
    for (const char* p : {"/opt/amazon/openmpi", "/opt/amazon/openmpi5"})
      if (part == p || part.rfind(std::string(p) + "/", 0) == 0) return true;
    if (e == std::string::npos) break;
    start = e + 1;
  }
  return false;
}
}  // namespace

void check_mpi_second_install(const Recipe& r, Findings& out) {
  if (!is_ngc_base(r.base.value)) return;
  for (const auto& p : r.apt)
    if (is_open_mpi_package(p.value))
      out.push_back(Finding(rules::mpi_second_install().info,
                            "apt package '" + p.value + "' installs a second Open MPI on an NGC base")
                        .hint("remove it; use the NGC image's Open MPI in /usr/local/mpi")
                        .at_node(p.where, p.length));
  for_each_env(r, [&](const Step& s, const NamedValue& e) {
    static const char* kMpiVars[] = {"PATH",           "MPI_HOME",        "MPI_ROOT",
                                     "OPAL_PREFIX",    "LD_LIBRARY_PATH", "CMAKE_PREFIX_PATH",
                                     "PKG_CONFIG_PATH"};
    bool relevant = false;
    for (const char* k : kMpiVars) relevant |= e.key.value == k;
    if (!relevant || !names_amazon_openmpi(e.value.value)) return;
    out.push_back(Finding(rules::mpi_second_install().info,
                          "step '" + s.name.value + "' points " + e.key.value +
                              " at the EFA installer's /opt/amazon/openmpi on an NGC base")
                      .hint("leave MPI to the NGC image's /usr/local/mpi")
                      .at_node(e.value.where, e.value.length));
  });
}

}  // namespace trainimg::recipes
