// SPDX-License-Identifier: GPL-3.0-or-later
// fleet-drift: seed 000 ("every node must share one identical environment"):
// per fact, the value most of the nodes that know it have; every other value
// is a finding on its node ("n17 runs kernel 7.0.0-1015-aws, 999 nodes run
// 7.0.0-1014-aws") and a drift row.
#include <algorithm>
#include <map>

#include "inspect/host/rules.h"

namespace trainimg::host {

namespace {

// Facts that name the node, not its environment: never drift.
bool per_node_fact(const std::string& k) {
  return k == "hostname" || k == "nvme_size";
}

std::string plural(size_t n, const char* one) {
  return std::to_string(n) + " " + one + (n == 1 ? "" : "s");
}

void judge(const RuleInfo& rule, FleetContext& c) {
  auto& nodes = c.nodes;
  // Drift: per fact, the majority value among the nodes that know it.
  std::vector<std::string> order;
  std::map<std::string, std::map<std::string, std::vector<size_t>>> values;  // fact -> value -> node indexes
  std::map<std::string, std::vector<std::pair<std::string, std::string>>> rows_by_digest;
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (!nodes[i].profile) continue;
    auto [it, fresh] = rows_by_digest.try_emplace(nodes[i].profile_digest);
    if (fresh) it->second = fact_rows(*nodes[i].profile);
    for (const auto& [k, v] : it->second) {
      if (per_node_fact(k)) continue;
      auto& m = values[k];
      if (m.empty() && std::find(order.begin(), order.end(), k) == order.end()) order.push_back(k);
      m[v].push_back(i);
    }
  }
  for (const auto& k : order) {
    const auto& m = values[k];
    if (m.size() < 2) continue;
    const std::pair<const std::string, std::vector<size_t>>* top = nullptr;
    for (const auto& kv : m)
      if (!top || kv.second.size() > top->second.size() ||
          (kv.second.size() == top->second.size() && kv.second.front() < top->second.front()))
        top = &kv;
    FleetDrift d{k, top->first, static_cast<int>(top->second.size()), {}};
    size_t known = 0;
    for (const auto& kv : m) known += kv.second.size();
    std::string tail = top->second.size() * 2 > known ? "" : " (no majority)";
    for (const auto& [v, idx] : m) {
      if (&v == &top->first) continue;
      for (size_t i : idx) {
        d.outliers.emplace_back(nodes[i].node, v);
        nodes[i].findings.push_back(
            Finding(rule, nodes[i].node + " runs " + k + " " + v + ", " + plural(top->second.size(), "node") +
                              (top->second.size() == 1 ? " runs " : " run ") + top->first + tail)
                .in(nodes[i].node));
      }
    }
    std::sort(d.outliers.begin(), d.outliers.end());
    c.result.drift.push_back(std::move(d));
  }
}

}  // namespace

const FleetRule kFleetDrift{
    {"fleet-drift", Severity::Error,
     "a fact (kernel, driver, EFA stack, counts, …) differs from the value most nodes have",
     "rebuild or replace the outlier from the fleet's DLAMI build; never upgrade one "
     "node's kernel",
     "seed 000 (every node must share one identical environment)", "fleet", "docs/slurm.md#rules"},
    judge};

}  // namespace trainimg::host
