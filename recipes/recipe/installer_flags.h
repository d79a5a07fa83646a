// SPDX-License-Identifier: GPL-3.0-or-later
// efa_installer.sh's options by their real spellings (domain.md §3), so
// recipe flags are compared as options, never as substrings.
#pragma once

#include <string>
#include <string_view>

namespace trainimg::recipes {

struct InstallerFlag {
  std::string_view long_name;   ///< "--skip-kmod"
  std::string_view short_name;  ///< "-k", or empty
  bool takes_value;             ///< --mpi=openmpi4
  bool container_set;           ///< always rendered: -y -g --skip-kmod --skip-limit-conf --no-verify
  bool defeats_container;       ///< never valid in an image build (uninstall, help, minimal)
};

/// The flag `spelled` names (value after '=' stored in `value`), or nullptr
/// for an unknown option.
const InstallerFlag* find_installer_flag(std::string_view spelled, std::string* value = nullptr);

/// The container flags every rendered recipe passes, in the seed's order.
inline constexpr std::string_view kContainerFlags = "-y -g --skip-kmod --skip-limit-conf --no-verify";

}  // namespace trainimg::recipes
