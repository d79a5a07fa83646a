// SPDX-License-Identifier: GPL-3.0-or-later
// nccl-tests: seed 000 "Single-node NCCL check": `Out of bounds values : 0 OK`
// (not 0 = failure regardless of performance) and busbw against the baseline
// (P6-B200 single node, 1 GiB all-reduce: 711 GB/s). The seed calls 711 "a
// reference value, not a guaranteed value": so no baseline is built in; when
// the user gives one, falling below ratio × baseline (default 0.9: the
// reference is not a guarantee, a 10% margin) is an error (domain.md §6).
#include <cstdio>

#include "common/units.h"
#include "inspect/host/parsers.h"
#include "inspect/host/rules.h"

namespace trainimg::host {

namespace {

std::string gbps(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", v);
  return buf;
}

void check(const RuleInfo& rule, const TextInput& in, CheckOutput& out) {
  const NcclTests& t = *in.nccl_tests;
  const std::optional<double>& baseline_busbw = in.baseline_busbw;
  const double min_ratio = in.min_ratio;
  const std::string& file = in.file;
  auto lines = split_lines(in.text);
  auto at = [&](int line, std::string msg, Severity sev = Severity::Error) {
    Diagnostic d = Finding(rule, std::move(msg)).in(file);
    d.severity = sev;
    d.line = line;
    if (line > 0 && line <= static_cast<int>(lines.size())) {
      d.column = 1;
      d.source_line = std::string(lines[line - 1]);
    }
    out.findings.push_back(std::move(d));
  };
  if (!t.failure.empty()) at(t.failure_line, "the run aborted: " + t.failure);
  if (t.rows.empty()) {
    if (t.failure.empty()) at(0, "no nccl-tests result rows (no `# size count …` header followed by rows)");
    return;
  }
  for (const auto& r : t.rows) {
    long long w = r.oop_wrong.value_or(0) + r.ip_wrong.value_or(0);
    if (w > 0)
      at(r.line, std::to_string(w) + " wrong value(s) at size " + std::to_string(r.size) + " B (#wrong)");
  }
  if (t.truncated_row) at(t.truncated_line, "the last row is cut off: the run did not finish");
  if (t.wrong_cells > 0 && t.wrong_na == t.wrong_cells)
    at(t.rows.front().line,
       "every #wrong is N/A: the run did not check its results (-c 0), so `Out of bounds values : 0` proves "
       "nothing; run with -c 1",
       Severity::Warning);
  if (!t.out_of_bounds)
    at(0, "no `# Out of bounds values` line: the output is truncated or the run did not finish");
  else if (*t.out_of_bounds != 0)
    at(t.out_of_bounds_line, "Out of bounds values : " + std::to_string(*t.out_of_bounds) +
                                 " (must be 0: a correctness failure regardless of performance)");
  const NcclTestsRow* largest = &t.rows.front();
  for (const auto& r : t.rows)
    if (r.size > largest->size) largest = &r;
  out.text_facts.emplace_back("rows", std::to_string(t.rows.size()));
  out.text_facts.emplace_back("largest size", format_exact_byte_size(static_cast<uint64_t>(largest->size)) +
                                                  " (line " + std::to_string(largest->line) + ")");
  out.text_facts.emplace_back("busbw at largest", gbps(largest->oop_busbw) + " GB/s out-of-place, " +
                                                      gbps(largest->ip_busbw) + " GB/s in-place");
  if (t.out_of_bounds) out.text_facts.emplace_back("out of bounds values", std::to_string(*t.out_of_bounds));
  if (t.avg_busbw) out.text_facts.emplace_back("avg bus bandwidth", gbps(*t.avg_busbw) + " GB/s");
  if (baseline_busbw) {
    double need = *baseline_busbw * min_ratio;
    double got = std::max(largest->oop_busbw, largest->ip_busbw);
    out.text_facts.emplace_back("baseline", gbps(*baseline_busbw) + " GB/s × " + gbps(min_ratio) + " = " +
                                                gbps(need) + " GB/s needed");
    if (got < need)
      at(largest->line, "busbw " + gbps(got) + " GB/s at " +
                            format_exact_byte_size(static_cast<uint64_t>(largest->size)) + " is below " +
                            gbps(min_ratio) + " × baseline " + gbps(*baseline_busbw) +
                            " GB/s = " + gbps(need) + " GB/s (ratio " + gbps(got / *baseline_busbw) + ")");
  }
  nlohmann::ordered_json rows = nlohmann::ordered_json::array();
  for (const auto& r : t.rows)
    rows.push_back(
        {{"size", r.size},
         {"count", r.count},
         {"oop_busbw", r.oop_busbw},
         {"ip_busbw", r.ip_busbw},
         {"oop_wrong", r.oop_wrong ? nlohmann::ordered_json(*r.oop_wrong) : nlohmann::ordered_json(nullptr)},
         {"ip_wrong", r.ip_wrong ? nlohmann::ordered_json(*r.ip_wrong) : nlohmann::ordered_json(nullptr)},
         {"line", r.line}});
  out.facts["rows"] = rows;
  out.facts["out_of_bounds"] =
      t.out_of_bounds ? nlohmann::ordered_json(*t.out_of_bounds) : nlohmann::ordered_json(nullptr);
  out.facts["avg_busbw"] =
      t.avg_busbw ? nlohmann::ordered_json(*t.avg_busbw) : nlohmann::ordered_json(nullptr);
  out.facts["largest_size"] = largest->size;
  out.facts["largest_busbw"] = largest->oop_busbw;
}

}  // namespace

const TextRule kNcclTests{
    {"nccl-tests", Severity::Error,
     "`Out of bounds values` ≠ 0 or missing, a `#wrong` ≠ 0, a cut-off last row, an aborted run (`Test NCCL "
     "failure …`); with `--baseline-busbw G`, busbw at the largest size < R × G (`--min-ratio R`, default 0.9); "
     "warning: every `#wrong` is `N/A` (`-c 0`: nothing was checked)",
     "a correctness failure is a GPU/driver/NVLink problem: run the single-node test first, "
     "check nvidia-smi and Fabric Manager; low busbw: check EFA (NCCL log) and topology",
     "seed 000 Single-node NCCL check (NVLink only)", "host", "docs/host.md#rules"},
    TextSource::NcclTests,
    check};

CheckOutput check_nccl_tests(const NcclTests& t, std::string_view text, const std::string& file,
                             std::optional<double> baseline_busbw, double min_ratio) {
  TextInput in;
  in.file = file;
  in.text = text;
  in.nccl_tests = &t;
  in.baseline_busbw = baseline_busbw;
  in.min_ratio = min_ratio;
  CheckOutput out;
  kNcclTests.check(kNcclTests.info, in, out);
  return out;
}

}  // namespace trainimg::host
