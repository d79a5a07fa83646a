// SPDX-License-Identifier: GPL-3.0-or-later
#include <algorithm>
#include <map>

#include "inspect/host/fleet.h"

namespace trainimg::host {

FleetDiff diff_profiles(const std::vector<std::pair<std::string, HostProfile>>& profiles) {
  FleetDiff d;
  std::vector<std::string> order;  // fact names in table order (first profile's, then new ones)
  std::vector<std::map<std::string, std::string>> values;
  for (const auto& [label, p] : profiles) {
    d.nodes.push_back(p.hostname.empty() ? label : p.hostname);
    std::map<std::string, std::string> m;
    for (auto& [k, v] : fact_rows(p)) {
      if (std::find(order.begin(), order.end(), k) == order.end()) order.push_back(k);
      m[k] = v;
    }
    values.push_back(std::move(m));
  }
  // Same hostname twice (two captures of one node): tell the columns apart.
  for (size_t i = 0; i < d.nodes.size(); ++i)
    for (size_t j = i + 1; j < d.nodes.size(); ++j)
      if (d.nodes[i] == d.nodes[j]) d.nodes[j] += " (" + profiles[j].first + ")";
  d.compared = static_cast<int>(order.size());
  for (const auto& k : order) {
    std::vector<std::string> row;
    for (const auto& m : values) {
      auto it = m.find(k);
      row.push_back(it == m.end() ? "-" : it->second);
    }
    if (std::adjacent_find(row.begin(), row.end(), std::not_equal_to<>()) != row.end())
      d.rows.emplace_back(k, row);
  }
  return d;
}

std::string render_fleet_table(const FleetDiff& d) {
  std::vector<size_t> width(d.nodes.size() + 1, 0);
  width[0] = 4;  // "fact"
  for (const auto& [k, row] : d.rows) width[0] = std::max(width[0], k.size());
  for (size_t i = 0; i < d.nodes.size(); ++i) {
    width[i + 1] = d.nodes[i].size();
    for (const auto& [k, row] : d.rows) width[i + 1] = std::max(width[i + 1], row[i].size());
  }
  auto cell = [](const std::string& s, size_t w, bool last) {
    return last ? s : s + std::string(w - s.size() + 2, ' ');
  };
  std::string out = cell("fact", width[0], d.nodes.empty());
  for (size_t i = 0; i < d.nodes.size(); ++i) out += cell(d.nodes[i], width[i + 1], i + 1 == d.nodes.size());
  out += "\n";
  for (const auto& [k, row] : d.rows) {
    out += cell(k, width[0], row.empty());
    for (size_t i = 0; i < row.size(); ++i) out += cell(row[i], width[i + 1], i + 1 == row.size());
    out += "\n";
  }
  return out;
}

}  // namespace trainimg::host
