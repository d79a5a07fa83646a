// SPDX-License-Identifier: GPL-3.0-or-later
// SARIF 2.1.0 as GitHub code scanning reads it: one run, tool.driver.rules
// with ids and help, results with ruleId/level/message/locations.
#include "common/report.h"
#include "common/version_info.h"

namespace trainimg {

namespace {
const char* level_of(Severity s) {
  switch (s) {
    case Severity::Error: return "error";
    case Severity::Warning: return "warning";
    case Severity::Info: return "note";
  }
  return "error";
}
}  // namespace

nlohmann::ordered_json render_sarif(const Report& r) {
  using oj = nlohmann::ordered_json;
  oj rules = oj::array();
  std::map<std::string, size_t> index;
  for (const auto& rule : r.rules) {
    if (index.count(rule.id)) continue;
    index[rule.id] = rules.size();
    oj jr;
    jr["id"] = rule.id;
    jr["name"] = rule.id;
    jr["shortDescription"] = {{"text", rule.summary}};
    jr["fullDescription"] = {{"text", rule.summary + (rule.seed.empty() ? "" : " (" + rule.seed + ")")}};
    jr["help"] = {{"text", rule.fix}};
    jr["defaultConfiguration"] = {{"level", level_of(rule.severity)}};
    rules.push_back(std::move(jr));
  }
  auto result_of = [&index](const Diagnostic& d) {
    oj res;
    res["ruleId"] = d.rule_id.empty() ? "trainimg" : d.rule_id;
    if (auto it = index.find(d.rule_id); it != index.end()) res["ruleIndex"] = it->second;
    res["level"] = level_of(d.severity);
    std::string text = d.message;
    if (!d.hint.empty()) text += "\nhint: " + d.hint;
    res["message"] = {{"text", text}};
    oj phys;
    std::string uri = d.file.empty() ? d.path : d.file;
    phys["artifactLocation"] = {{"uri", uri.empty() ? "unknown" : uri}};
    if (d.line > 0) {
      oj region;
      region["startLine"] = d.line;
      if (d.column > 0) {
        region["startColumn"] = d.column;
        if (d.length > 0) region["endColumn"] = d.column + d.length;
      }
      phys["region"] = region;
    }
    oj loc;
    loc["physicalLocation"] = phys;
    if (!d.path.empty() && !d.file.empty()) {
      std::string fq = d.path + (d.layer.empty() ? "" : " (layer " + d.layer + ")");
      loc["logicalLocations"] = oj::array({{{"fullyQualifiedName", fq}, {"kind", "member"}}});
    }
    res["locations"] = oj::array({loc});
    if (!d.related.empty()) {
      oj rel = oj::array();
      int id = 1;
      for (const auto& x : d.related) {
        oj region = {{"startLine", x.line}, {"startColumn", x.column}};
        if (x.length > 0) region["endColumn"] = x.column + x.length;
        rel.push_back({{"id", id++},
                       {"physicalLocation", {{"artifactLocation", {{"uri", x.file}}}, {"region", region}}},
                       {"message", {{"text", x.message}}}});
      }
      res["relatedLocations"] = std::move(rel);
    }
    return res;
  };
  std::vector<Diagnostic> sorted = r.findings;
  sort_diagnostics(sorted);
  oj results = oj::array();
  for (const auto& d : sorted) {
    oj res = result_of(d);
    if (r.baseline) res["baselineState"] = "new";
    results.push_back(std::move(res));
  }
  // With a baseline, GitHub code scanning reads the whole picture: the
  // findings the baseline accepted (unchanged) and those gone (absent).
  for (const auto& s : r.suppressed) {
    if (s.by == "baseline" ? !r.baseline : !r.show_suppressed) continue;
    oj res = result_of(s.finding);
    if (r.baseline) res["baselineState"] = s.by == "baseline" ? "unchanged" : "new";
    if (s.by != "baseline")
      res["suppressions"] =
          oj::array({{{"kind", "external"}, {"justification", s.by + " (" + s.where + "): " + s.reason}}});
    results.push_back(std::move(res));
  }
  if (r.baseline)
    for (const auto& d : r.baseline->absent) {
      oj res = result_of(d);
      res["baselineState"] = "absent";
      results.push_back(std::move(res));
    }
  oj run;
  run["tool"] = {{"driver",
                  {{"name", "trainimg"},
                   {"version", TRAINIMG_VERSION},
                   {"informationUri", "https://example.invalid/trainimg"},
                   {"rules", rules}}}};
  run["results"] = results;
  oj out;
  out["$schema"] = "https://json.schemastore.org/sarif-2.1.0.json";
  out["version"] = "2.1.0";
  out["runs"] = oj::array({run});
  return out;
}

}  // namespace trainimg
