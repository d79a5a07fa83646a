// SPDX-License-Identifier: GPL-3.0-or-later
#include "common/report.h"
#include "common/version_info.h"

namespace trainimg {

namespace {
nlohmann::ordered_json finding_json(const Diagnostic& d) {
  nlohmann::ordered_json j;
  j["rule"] = d.rule_id;
  j["severity"] = std::string(to_string(d.severity));
  j["message"] = d.message;
  j["file"] = d.file;
  j["line"] = d.line;
  j["column"] = d.column;
  if (d.length > 0) j["length"] = d.length;
  if (!d.path.empty()) j["path"] = d.path;
  if (!d.layer.empty()) j["layer"] = d.layer;
  j["hint"] = d.hint;
  if (!d.seed.empty()) j["seed"] = d.seed;
  if (!d.related.empty()) {
    nlohmann::ordered_json rel = nlohmann::ordered_json::array();
    for (const auto& x : d.related)
      rel.push_back({{"file", x.file},
                     {"line", x.line},
                     {"column", x.column},
                     {"length", x.length},
                     {"message", x.message}});
    j["related"] = std::move(rel);
  }
  return j;
}
}  // namespace

nlohmann::ordered_json render_json(const Report& r) {
  nlohmann::ordered_json j;
  j["schema"] = "trainimg." + r.kind + "/v1";
  j["tool"] = {{"name", "trainimg"}, {"version", TRAINIMG_VERSION}};
  j["inputs"] = r.inputs;
  std::vector<Diagnostic> sorted = r.findings;
  sort_diagnostics(sorted);
  int counts[3] = {0, 0, 0};
  nlohmann::ordered_json findings = nlohmann::ordered_json::array();
  for (const auto& d : sorted) {
    findings.push_back(finding_json(d));
    counts[static_cast<int>(d.severity)]++;
  }
  j["summary"] = {{"errors", counts[2]}, {"warnings", counts[1]}, {"infos", counts[0]}};
  if (!r.facts.is_null()) j["facts"] = r.facts;
  if (!r.notes.empty()) j["notes"] = r.notes;
  j["findings"] = std::move(findings);
  if (r.baseline) {
    int unchanged = 0;
    for (const auto& s : r.suppressed) unchanged += s.by == "baseline";
    nlohmann::ordered_json absent = nlohmann::ordered_json::array();
    for (const auto& d : r.baseline->absent) absent.push_back(finding_json(d));
    j["baseline"] = {{"file", r.baseline->file},
                     {"new", r.findings.size()},
                     {"unchanged", unchanged},
                     {"absent", std::move(absent)}};
  }
  if (r.show_suppressed) {
    nlohmann::ordered_json hidden = nlohmann::ordered_json::array();
    for (const auto& s : r.suppressed) {
      nlohmann::ordered_json f = finding_json(s.finding);
      f["suppressed"] = {{"by", s.by}, {"reason", s.reason}, {"where", s.where}};
      hidden.push_back(std::move(f));
    }
    j["suppressed"] = std::move(hidden);
  }
  return j;
}

}  // namespace trainimg
