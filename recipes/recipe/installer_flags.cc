// SPDX-License-Identifier: GPL-3.0-or-later
#include "recipes/recipe/installer_flags.h"

namespace trainimg::recipes {

namespace {
// efa_installer.sh usage (public installer; domain.md §3). -g is a no-op in
// recent releases but stays in the seed's set.
constexpr InstallerFlag kFlags[] = {
    {"--yes", "-y", false, true, false},
    {"--enable-gdr", "-g", false, true, false},
    {"--skip-kmod", "-k", false, true, false},
    {"--skip-limit-conf", "-l", false, true, false},
    {"--no-verify", "-n", false, true, false},
    {"--debug-packages", "-d", false, false, false},
    {"--minimal", "-m", false, false, true},
    {"--uninstall", "-u", false, false, true},
    {"--help", "-h", false, false, true},
    {"--mpi", "", true, false, false},
    {"--skip-mpi", "", false, false, false},
    {"--skip-rdma-core", "", false, false, false},
    {"--disable-ngc", "", false, false, false},
    {"--enable-ngc", "", false, false, false},
};
}  // namespace

const InstallerFlag* find_installer_flag(std::string_view spelled, std::string* value) {
  std::string_view name = spelled;
  size_t eq = spelled.find('=');
  if (eq != std::string_view::npos) name = spelled.substr(0, eq);
  for (const auto& f : kFlags) {
    if (name != f.long_name && (f.short_name.empty() || name != f.short_name)) continue;
    if (f.takes_value != (eq != std::string_view::npos)) return nullptr;
    if (value) *value = eq == std::string_view::npos ? std::string() : std::string(spelled.substr(eq + 1));
    return &f;
  }
  return nullptr;
}

}  // namespace trainimg::recipes
