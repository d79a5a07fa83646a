// SPDX-License-Identifier: GPL-3.0-or-later
// Many nodes at once: `trainimg fleet check` and `trainimg host diff`.
// A public header of the host library; implemented in fleet.cc and diff.cc.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/diagnostic.h"
#include "inspect/host.h"

namespace trainimg::host {

// ------------------------------------------------------------------- fleet
// `trainimg fleet check` (issue 12): every node's profile judged with the
// host rules, then the nodes compared with each other. A fact whose value
// differs from the majority's is `fleet-drift` on the outlier node ("n17
// runs kernel 7.0.0-1015-aws, 999 nodes run 7.0.0-1014-aws"); a node that
// gave no profile is `node-unreachable`. How the profiles are gathered
// (srun, a directory) is the caller's business (builder/slurm/slurm.h).

inline constexpr std::string_view kFleetSchema = "trainimg.fleet/v1";

/// The rules of kind "fleet" (fleet-drift, node-unreachable: the
/// FLEET_RULEs of rules/rules.def), in catalogue order.
std::vector<RuleInfo> fleet_only_rules();
/// The rules a fleet check evaluates: the profile rules, fleet-drift,
/// node-unreachable.
std::vector<RuleInfo> fleet_rules();

struct FleetNode {
  std::string node;                    ///< Slurm node name (or file name)
  std::string state = "ok";            ///< "ok" or "node-unreachable"
  std::string why;                     ///< node-unreachable: why it gave no profile
  std::optional<HostProfile> profile;  ///< absent when unreachable
  std::string profile_digest;          ///< sha256 of the profile's facts (equal facts, equal digest)
  std::vector<Diagnostic> findings;    ///< file = node name
};

struct FleetDrift {
  std::string fact;
  std::string majority;  ///< the value most nodes have
  int majority_nodes = 0;
  std::vector<std::pair<std::string, std::string>> outliers;  ///< (node, value)
};

struct FleetResult {
  std::vector<FleetNode> nodes;  ///< in the order given
  std::vector<FleetDrift> drift;
  bool failed() const;  ///< any node has an error finding
};

/// A reachable node: its profile (digest computed here).
FleetNode fleet_node(std::string node, HostProfile profile);
/// A node that gave no profile, and why ("srun: … ", "drained", "timeout");
/// judge_fleet reports it (node-unreachable).
FleetNode unreachable_node(std::string node, std::string why);

/// Judges every reachable node with check_host (same expectations and
/// baseline for all), then runs the FLEET_RULEs of rules/rules.def over the
/// nodes together: fleet-drift findings against the majority,
/// node-unreachable findings.
FleetResult judge_fleet(std::vector<FleetNode> nodes, const HostExpectations& e,
                        const HostProfile* baseline = nullptr, const std::string& baseline_file = {});

/// Reports. text: a node × rule table, failing groups first, nodes with
/// identical results grouped on one line, then each error/warning and the
/// drift lines. json: trainimg.fleet/v1. junit: one test case per node and
/// rule. sarif: one result per finding, the node as its location.
std::string render_fleet_text(const FleetResult& r);
std::string render_fleet_json(const FleetResult& r);
std::string render_fleet_junit(const FleetResult& r);
std::string render_fleet_sarif(const FleetResult& r);

/// "trainimg: RULE: MESSAGE" of the node's first error: the drain reason
/// (NHC's "NHC: check: message" form). Empty when the node has no error.
std::string drain_reason(const FleetNode& n);
/// Lines "trainimg: RULE: MESSAGE" for every error (the node gate's stderr).
std::vector<std::string> error_lines(const std::vector<Diagnostic>& findings);

// `host diff`: the facts that differ between nodes (seed 000: every node of a
// training job must share one environment).
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
/// `host diff`'s output: the table and a summary line, or with `json` the
/// trainimg.host-diff/v1 document of `inputs` (the files, in order).
std::string render_host_diff(const FleetDiff& d, const std::vector<std::string>& inputs, bool json);
}  // namespace trainimg::host
