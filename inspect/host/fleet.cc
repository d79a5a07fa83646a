// SPDX-License-Identifier: GPL-3.0-or-later
#include "inspect/host/fleet.h"

#include <algorithm>
#include <map>
#include <sstream>

#include "common/report.h"
#include "common/sha256.h"
#include "common/xml.h"
#include "inspect/host/rules.h"

namespace trainimg::host {

namespace {

using Json = nlohmann::ordered_json;

// "n1, n2, n3" up to 6 names, else "n1, n2, … n9 (N nodes)".
std::string name_list(const std::vector<std::string>& names) {
  std::string out;
  if (names.size() <= 6) {
    for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
    return out;
  }
  return names[0] + ", " + names[1] + ", … " + names.back() + " (" + std::to_string(names.size()) + " nodes)";
}

std::string plural(size_t n, const char* one) {
  return std::to_string(n) + " " + one + (n == 1 ? "" : "s");
}

}  // namespace

const std::vector<const FleetRule*>& all_fleet_rules() {
  static const std::vector<const FleetRule*> kRules = {
#define FLEET_RULE(name) &name,
#include "inspect/host/rules/rules.def"
  };
  return kRules;
}

std::vector<RuleInfo> fleet_only_rules() {
  std::vector<RuleInfo> r;
  for (const auto* f : all_fleet_rules()) r.push_back(f->info);
  return r;
}

std::vector<RuleInfo> fleet_rules() {
  auto r = profile_rules();
  auto own = fleet_only_rules();
  r.insert(r.end(), own.begin(), own.end());
  return r;
}

bool FleetResult::failed() const {
  for (const auto& n : nodes)
    for (const auto& f : n.findings)
      if (f.severity == Severity::Error) return true;
  return false;
}

FleetNode fleet_node(std::string node, HostProfile profile) {
  FleetNode n;
  n.node = std::move(node);
  n.profile_digest = sha256_digest(to_json(profile)["facts"].dump());
  n.profile = std::move(profile);
  return n;
}

FleetNode unreachable_node(std::string node, std::string why) {
  FleetNode n;
  n.node = std::move(node);
  n.state = "node-unreachable";
  n.why = std::move(why);
  return n;
}

FleetResult judge_fleet(std::vector<FleetNode> nodes, const HostExpectations& e, const HostProfile* baseline,
                        const std::string& baseline_file) {
  FleetResult r;
  // Identical facts judge identically: judge one profile per digest (1,000
  // healthy nodes are one check_host call).
  std::map<std::string, HostCheckResult> by_digest;
  for (auto& n : nodes) {
    if (!n.profile) continue;
    auto it = by_digest.find(n.profile_digest);
    if (it == by_digest.end())
      it = by_digest.emplace(n.profile_digest, check_host(*n.profile, e, baseline, n.node, baseline_file))
               .first;
    for (auto f : it->second.findings) {
      f.file = n.node;
      n.findings.push_back(std::move(f));
    }
  }
  // Then the FLEET_RULEs judge the nodes together (fleet-drift, node-unreachable).
  FleetContext c{nodes, r};
  for (const auto* rule : all_fleet_rules()) rule->judge(rule->info, c);
  r.nodes = std::move(nodes);
  return r;
}

std::string drain_reason(const FleetNode& n) {
  for (const auto& f : n.findings)
    if (f.severity == Severity::Error) return "trainimg: " + f.rule_id + ": " + f.message;
  return {};
}

std::vector<std::string> error_lines(const std::vector<Diagnostic>& findings) {
  std::vector<std::string> out;
  for (const auto& f : findings)
    if (f.severity == Severity::Error) out.push_back("trainimg: " + f.rule_id + ": " + f.message);
  return out;
}

namespace {

// The worst severity of `rule` on node `n`: "error", "warning", "" (clean).
std::string cell(const FleetNode& n, const std::string& rule) {
  std::string s;
  for (const auto& f : n.findings) {
    if (f.rule_id != rule || f.severity == Severity::Info) continue;
    if (f.severity == Severity::Error) return "error";
    s = "warning";
  }
  return s;
}

}  // namespace

std::string render_fleet_text(const FleetResult& r) {
  // Columns: the rules that fired somewhere (at warning or above).
  std::vector<std::string> cols;
  for (const auto& rule : fleet_rules())
    for (const auto& n : r.nodes)
      if (!cell(n, rule.id).empty()) {
        cols.push_back(rule.id);
        break;
      }
  // Groups: nodes with the same state and the same cells.
  struct Group {
    std::vector<std::string> cells;
    std::string state;
    std::vector<std::string> names;
    int errors = 0;
  };
  std::vector<Group> groups;
  for (const auto& n : r.nodes) {
    Group g;
    g.state = n.state;
    for (const auto& c : cols) {
      g.cells.push_back(cell(n, c));
      g.errors += g.cells.back() == "error" ? 2 : g.cells.back() == "warning" ? 1 : 0;
    }
    auto it = std::find_if(groups.begin(), groups.end(),
                           [&g](const Group& o) { return o.cells == g.cells && o.state == g.state; });
    if (it == groups.end()) it = groups.insert(groups.end(), std::move(g));
    it->names.push_back(n.node);
  }
  std::stable_sort(groups.begin(), groups.end(),
                   [](const Group& a, const Group& b) { return a.errors > b.errors; });
  std::vector<std::string> head = {"nodes", "state"};
  for (const auto& c : cols) head.push_back(c);
  std::vector<std::vector<std::string>> rows;
  for (const auto& g : groups) {
    std::vector<std::string> row = {name_list(g.names), g.state};
    for (const auto& c : g.cells) row.push_back(c.empty() ? "ok" : c);
    rows.push_back(std::move(row));
  }
  std::vector<size_t> w(head.size());
  for (size_t i = 0; i < head.size(); ++i) {
    w[i] = head[i].size();
    for (const auto& row : rows) w[i] = std::max(w[i], row[i].size());
  }
  std::ostringstream out;
  auto line = [&](const std::vector<std::string>& row) {
    std::string s;
    for (size_t i = 0; i < row.size(); ++i)
      s += i + 1 == row.size() ? row[i] : row[i] + std::string(w[i] - row[i].size() + 2, ' ');
    out << s << "\n";
  };
  line(head);
  for (const auto& row : rows) line(row);
  // Details: each node's errors and warnings (drift lines name the outliers).
  bool any = false;
  for (const auto& n : r.nodes)
    for (const auto& f : n.findings) {
      if (f.severity == Severity::Info) continue;
      if (!any) out << "\n";
      any = true;
      out << n.node << ": " << to_string(f.severity) << ": " << f.message << " [" << f.rule_id << "]\n";
    }
  size_t failing = 0, errors = 0, warnings = 0;
  for (const auto& n : r.nodes) {
    bool bad = false;
    for (const auto& f : n.findings) {
      if (f.severity == Severity::Error) ++errors, bad = true;
      if (f.severity == Severity::Warning) ++warnings;
    }
    failing += bad;
  }
  out << "\n"
      << plural(r.nodes.size(), "node") << ", " << failing << " failing: " << plural(errors, "error") << ", "
      << plural(warnings, "warning") << "\n";
  return out.str();
}

std::string render_fleet_json(const FleetResult& r) {
  Json j;
  j["schema"] = kFleetSchema;
  Json nodes = Json::array();
  for (const auto& n : r.nodes) {
    Json f = Json::array();
    for (const auto& d : n.findings)
      f.push_back({{"rule", d.rule_id}, {"severity", to_string(d.severity)}, {"message", d.message}});
    nodes.push_back({{"node", n.node},
                     {"state", n.state},
                     {"profile_digest", n.profile ? Json(n.profile_digest) : Json(nullptr)},
                     {"findings", f}});
  }
  j["nodes"] = nodes;
  Json drift = Json::array();
  for (const auto& d : r.drift) {
    Json o = Json::array();
    for (const auto& [node, v] : d.outliers) o.push_back({{"node", node}, {"value", v}});
    drift.push_back(
        {{"fact", d.fact}, {"majority", d.majority}, {"majority_nodes", d.majority_nodes}, {"outliers", o}});
  }
  j["drift"] = drift;
  size_t failing = 0;
  for (const auto& n : r.nodes)
    failing += std::any_of(n.findings.begin(), n.findings.end(),
                           [](const Diagnostic& d) { return d.severity == Severity::Error; });
  j["summary"] = {{"nodes", r.nodes.size()}, {"failing", failing}};
  return j.dump(2) + "\n";
}

std::string render_fleet_junit(const FleetResult& r) {
  auto rules = fleet_rules();
  std::ostringstream cases;
  size_t tests = 0, failures = 0;
  for (const auto& n : r.nodes)
    for (const auto& rule : rules) {
      ++tests;
      std::string body, out;
      for (const auto& f : n.findings) {
        if (f.rule_id != rule.id) continue;
        if (f.severity == Severity::Info) {
          out += f.message + "\n";
          continue;
        }
        ++failures;
        body += "      <failure type=\"" + std::string(to_string(f.severity)) + "\" message=\"" +
                xml_escape(f.message) + "\">" +
                xml_escape(f.message + (f.hint.empty() ? "" : "\nhint: " + f.hint)) + "</failure>\n";
      }
      cases << "    <testcase classname=\"trainimg.fleet." << xml_escape(n.node) << "\" name=\""
            << xml_escape(rule.id) << "\"";
      if (body.empty() && out.empty()) {
        cases << "/>\n";
        continue;
      }
      cases << ">\n" << body;
      if (!out.empty()) cases << "      <system-out>" << xml_escape(out) << "</system-out>\n";
      cases << "    </testcase>\n";
    }
  std::ostringstream x;
  x << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites>\n  <testsuite name=\"trainimg fleet check\" "
       "tests=\""
    << tests << "\" failures=\"" << failures << "\">\n"
    << cases.str() << "  </testsuite>\n</testsuites>\n";
  return x.str();
}

std::string render_fleet_sarif(const FleetResult& r) {
  Report rep;
  rep.kind = "fleet";
  rep.rules = fleet_rules();
  for (const auto& n : r.nodes) {
    rep.inputs.push_back(n.node);
    for (const auto& f : n.findings) rep.findings.push_back(f);
  }
  return render(rep, Format::Sarif);
}

}  // namespace trainimg::host
