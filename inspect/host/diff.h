// SPDX-License-Identifier: GPL-3.0-or-later
// `host diff`: the facts that differ between nodes (seed 000: every node of a
// training job must share one environment).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "inspect/host/profile.h"

namespace trainimg::host {

struct FleetDiff {
  std::vector<std::string> nodes;  ///< column names (hostname, else file name)
  /// Fact name -> one value per node ("-" when unknown), only facts that differ.
  std::vector<std::pair<std::string, std::vector<std::string>>> rows;
  int compared = 0;  ///< number of facts compared
};

/// `profiles` are (label, profile) pairs in command-line order.
FleetDiff diff_profiles(const std::vector<std::pair<std::string, HostProfile>>& profiles);
/// A fixed-width table: "fact  node1  node2 …", one row per differing fact.
std::string render_fleet_table(const FleetDiff& d);

}  // namespace trainimg::host
