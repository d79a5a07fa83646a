// SPDX-License-Identifier: GPL-3.0-or-later
// The reports of `host check` and `check nccl-log|nccl-tests` (before
// policy), and `host diff` (text table, or JSON trainimg.host-diff/v1).
#include "common/error.h"
#include "common/source_file.h"
#include "inspect/host.h"
#include "inspect/host/checkers.h"
#include "inspect/host/fleet.h"
#include "inspect/host/rules.h"

namespace trainimg::host {

Report host_check_report(const HostProfile& p, const HostExpectations& e, const HostProfile* baseline,
                         const std::string& where, const std::string& baseline_file) {
  HostCheckResult res = check_host(p, e, baseline, where, baseline_file);
  Report r;
  r.kind = "host";
  r.inputs = {where};
  if (baseline) r.inputs.push_back(baseline_file);
  r.rules = profile_rules();
  r.findings = std::move(res.findings);
  r.notes = std::move(res.notes);
  r.text_facts.emplace_back("host", p.hostname.empty() ? "?" : p.hostname);
  for (auto& [k, v] : fact_rows(p))
    if (k != "held_packages" && k != "infiniband_devices" && k != "fi_info_domains")
      r.text_facts.emplace_back(k, v);
  r.facts = to_json(p)["facts"];
  return r;
}

namespace {

// Runs the TEXT_RULEs of `source` on `in`.
Report text_check_report(const char* kind, TextSource source, const TextInput& in) {
  CheckOutput out;
  Report r;
  r.kind = kind;
  run_text_rules(source, in, r.rules, out);
  r.inputs = {in.file};
  r.findings = std::move(out.findings);
  r.notes = std::move(out.notes);
  r.text_facts = std::move(out.text_facts);
  r.facts = std::move(out.facts);
  return r;
}

}  // namespace

Report nccl_log_report(const std::string& file, std::optional<int> expect_nics) {
  SourceFile src = SourceFile::read(file);
  NcclLog log = parse_nccl_log(src.text());
  TextInput in;
  in.file = file;
  in.text = src.text();
  in.nccl_log = &log;
  in.expect_nics = expect_nics;
  return text_check_report("nccl-log", TextSource::NcclLog, in);
}

Report nccl_tests_report(const std::string& file, std::optional<double> baseline_busbw, double min_ratio) {
  if (baseline_busbw && *baseline_busbw < 0)
    throw Error("--baseline-busbw", "must be a positive GB/s figure");
  if (!(min_ratio > 0 && min_ratio <= 1)) throw Error("--min-ratio", "must be in (0, 1]");
  SourceFile src = SourceFile::read(file);
  NcclTests t = parse_nccl_tests(src.text(), file);
  TextInput in;
  in.file = file;
  in.text = src.text();
  in.nccl_tests = &t;
  in.baseline_busbw = baseline_busbw;
  in.min_ratio = min_ratio;
  return text_check_report("nccl-tests", TextSource::NcclTests, in);
}

std::string render_host_diff(const FleetDiff& d, const std::vector<std::string>& inputs, bool json) {
  if (json) {
    nlohmann::ordered_json j;
    j["schema"] = "trainimg.host-diff/v1";
    j["inputs"] = inputs;
    j["nodes"] = d.nodes;
    j["compared"] = d.compared;
    nlohmann::ordered_json rows = nlohmann::ordered_json::array();
    for (const auto& [k, v] : d.rows) rows.push_back({{"fact", k}, {"values", v}});
    j["differences"] = rows;
    return j.dump(2) + "\n";
  }
  if (d.rows.empty())
    return "all " + std::to_string(d.nodes.size()) + " nodes agree on " + std::to_string(d.compared) +
           " facts\n";
  return render_fleet_table(d) + "\n" + std::to_string(d.rows.size()) + " of " + std::to_string(d.compared) +
         " facts differ: every node must share one environment\n";
}

}  // namespace trainimg::host
