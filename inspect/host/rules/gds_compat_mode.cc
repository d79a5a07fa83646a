// SPDX-License-Identifier: GPL-3.0-or-later
// gds-compat-mode: seed 004 §4 "How to read the nvidia-fs counters":
// throughput alone cannot tell GDS from compat mode; Mmap/Bar1-map must rise
// after a GDS run, Sparse Reads after a GDS read, none may move after a CPU
// run, and every err= must be 0.
#include "common/units.h"
#include "inspect/host/parsers.h"
#include "inspect/host/rules.h"

namespace trainimg::host {

namespace {

bool is_error_field(const std::string& k) {
  return k == "err" || k.ends_with("_err") || k.ends_with("-err");
}

void check(const RuleInfo& rule, const TextInput& in, CheckOutput& out) {
  const NvfsStats& before = *in.stats_before;
  const NvfsStats& after = *in.stats_after;
  const std::string& before_file = in.before_file;
  const std::string& after_file = in.file;
  const GdsMode mode = in.mode;
  const long long io_size = in.io_size;
  auto add = [&](int line, std::string msg) {
    Diagnostic d = Finding(rule, std::move(msg)).in(after_file);
    d.line = line;
    out.findings.push_back(std::move(d));
  };
  const bool gds = mode != GdsMode::Cpu;
  for (const char* key : {"Mmap", "Bar1-map", "Sparse Reads"}) {
    auto b = before.counters.find(key);
    auto a = after.counters.find(key);
    if (b == before.counters.end() || !b->second.fields.count("n")) {
      Diagnostic d =
          Finding(rule, std::string("no `") + key + " : n=…` line in the before counters").in(before_file);
      out.findings.push_back(std::move(d));
      continue;
    }
    if (a == after.counters.end() || !a->second.fields.count("n")) {
      add(0, std::string("no `") + key + " : n=…` line in the after counters");
      continue;
    }
    long long vb = b->second.fields.at("n"), va = a->second.fields.at("n");
    long long delta = va - vb;
    std::string shown = std::string(key) + " " + std::to_string(vb) + " → " + std::to_string(va) + " (" +
                        (delta >= 0 ? "+" : "") + std::to_string(delta);
    if (std::string(key) == "Sparse Reads" && delta > 0 && io_size > 0)
      shown += " = " + format_exact_byte_size(static_cast<uint64_t>(delta * io_size)) + " / " +
               format_exact_byte_size(static_cast<uint64_t>(io_size));
    shown += ")";
    out.text_facts.emplace_back(key, shown.substr(std::string(key).size() + 1));
    bool must_rise = gds && (std::string(key) != "Sparse Reads" || mode == GdsMode::GdsRead);
    if (must_rise && delta <= 0)
      add(a->second.line, shown + " after a GDS " + (mode == GdsMode::GdsRead ? "read" : "write") +
                              ": the I/O did not take the GDS path (cuFile compat mode, through the CPU)");
    if (!gds && delta != 0)
      add(a->second.line,
          shown +
              " after a CPU-only run: these counters must stay the same (another GDS job ran, "
              "or the files are not the right before/after pair)");
  }
  for (const auto& [key, c] : after.counters) {
    for (const auto& [field, v] : c.fields) {
      bool error_line = key == "Error";
      if (v != 0 && (error_line || is_error_field(field)))
        add(c.line, key + " " + field + "=" + std::to_string(v) + " (every error count must be 0)");
    }
  }
}

}  // namespace

const TextRule kGdsCompatMode{
    {"gds-compat-mode", Severity::Error,
     "after a GDS run `Mmap`/`Bar1-map` `n` did not increase, after a GDS read `Sparse Reads` did not, "
     "after a CPU-only run any of them changed, or any `err=`/`Error` count ≠ 0",
     "gdsio ran through the CPU (compat mode): set \"allow_compat_mode\": false in a copy of "
     "cufile.json (CUFILE_ENV_PATH_JSON), rerun, and read the error and cufile.log",
     "seed 004 §4 Verify actual GDS I/O (gdsio)", "host", "docs/host.md#rules"},
    TextSource::NvfsCounters,
    check};

void check_gds_counters(const NvfsStats& before, const NvfsStats& after, const std::string& before_file,
                        const std::string& after_file, GdsMode mode, long long io_size, CheckOutput& out) {
  TextInput in;
  in.file = after_file;
  in.stats_before = &before;
  in.stats_after = &after;
  in.before_file = before_file;
  in.mode = mode;
  in.io_size = io_size;
  kGdsCompatMode.check(kGdsCompatMode.info, in, out);
}

}  // namespace trainimg::host
