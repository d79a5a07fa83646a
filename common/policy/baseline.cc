// SPDX-License-Identifier: GPL-3.0-or-later
// Baselines (trainimg.baseline/v1): today's findings, recorded so that a CI
// gate fails only on new ones. A finding is known by its fingerprint, not
// its line, so that lines inserted above it do not make it new.
#include <cctype>
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>

#include "common/error.h"
#include "common/json_text.h"
#include "common/policy/policy.h"
#include "common/version_info.h"

namespace trainimg::policy {

namespace {

// Whitespace runs become one space; leading and trailing whitespace goes.
std::string collapse(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (std::isspace(static_cast<unsigned char>(c))) {
      if (!out.empty() && out.back() != ' ') out += ' ';
    } else {
      out += c;
    }
  }
  if (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

// Positions inside a message ("line 12", "Dockerfile:12:5") become '#'.
std::string without_positions(const std::string& m) {
  std::string out;
  for (size_t i = 0; i < m.size();) {
    bool after_line = out.size() >= 5 && out.compare(out.size() - 5, 5, "line ") == 0;
    bool after_colon = !out.empty() && out.back() == ':';
    if (std::isdigit(static_cast<unsigned char>(m[i])) && (after_line || after_colon)) {
      while (i < m.size() && std::isdigit(static_cast<unsigned char>(m[i]))) ++i;
      out += '#';
    } else {
      out += m[i++];
    }
  }
  return out;
}

// FNV-1a, 64 bits: stable across compilers and runs (std::hash is not).
std::string fnv1a(std::string_view s) {
  std::uint64_t h = 14695981039346656037ull;
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ull;
  }
  static const char* kHex = "0123456789abcdef";
  std::string out(16, '0');
  for (int i = 15; i >= 0; --i, h >>= 4) out[i] = kHex[h & 15];
  return out;
}

}  // namespace

std::string fingerprint(const Diagnostic& d, const Sources* sources) {
  std::string line = d.source_line;
  if (line.empty() && sources && d.line > 0)
    if (auto it = sources->find(d.file); it != sources->end())
      line = std::string(it->second->line_text(d.line));
  std::string key = d.rule_id + '\n' + d.file + '\n' + d.path + '\n' + collapse(line) + '\n' +
                    collapse(without_positions(d.message));
  return fnv1a(key);
}

std::string baseline_json(const Report& r, const Sources* sources) {
  nlohmann::ordered_json j;
  j["schema"] = kBaselineSchema;
  j["tool"] = {{"name", "trainimg"}, {"version", TRAINIMG_VERSION}};
  j["kind"] = r.kind;
  std::vector<Diagnostic> sorted = r.findings;
  sort_diagnostics(sorted);
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  for (const auto& d : sorted) {
    nlohmann::ordered_json e;
    e["rule"] = d.rule_id;
    e["file"] = d.file;
    if (!d.path.empty()) e["path"] = d.path;
    e["fingerprint"] = fingerprint(d, sources);
    e["severity"] = std::string(to_string(d.severity));
    e["line"] = d.line;
    e["column"] = d.column;
    e["message"] = d.message;
    list.push_back(std::move(e));
  }
  j["findings"] = std::move(list);
  return j.dump(2) + "\n";
}

std::string json_schema_of(const std::string& path) {
  SourceFile src = SourceFile::read(path);
  auto j = nlohmann::json::parse(src.text(), nullptr, false);
  if (j.is_discarded() || !j.is_object() || !j.contains("schema") || !j["schema"].is_string()) return {};
  return j["schema"].get<std::string>();
}

Baseline read_baseline(const std::string& path) {
  SourceFile src = SourceFile::read(path);
  nlohmann::json j = parse_json_text(src, "not JSON", "write one with --write-baseline FILE");
  auto bad = [&](const std::string& what) {
    throw Error(path, "not a " + std::string(kBaselineSchema) + " baseline: " + what,
                "write one with --write-baseline FILE");
  };
  if (!j.is_object() || j.value("schema", std::string()) != kBaselineSchema)
    bad("its schema is not " + std::string(kBaselineSchema));
  if (!j.contains("findings") || !j["findings"].is_array()) bad("no findings list");
  Baseline b;
  b.file = path;
  for (const auto& f : j["findings"]) {
    if (!f.is_object() || !f.contains("rule") || !f.contains("fingerprint") || !f["fingerprint"].is_string())
      bad("a finding without rule or fingerprint");
    BaselineEntry e;
    e.rule = f.value("rule", std::string());
    e.file = f.value("file", std::string());
    e.path = f.value("path", std::string());
    e.fingerprint = f["fingerprint"].get<std::string>();
    e.message = f.value("message", std::string());
    e.severity = parse_severity(f.value("severity", std::string("error"))).value_or(Severity::Error);
    e.line = f.value("line", 0);
    e.column = f.value("column", 0);
    b.entries.push_back(std::move(e));
  }
  return b;
}

void apply_baseline(Report& r, const Baseline& b, const Sources* sources) {
  // Each entry accepts one finding: a second identical finding is new.
  std::multimap<std::string, const BaselineEntry*> open;
  for (const auto& e : b.entries) open.emplace(e.fingerprint, &e);
  std::vector<Diagnostic> fresh;
  for (auto& d : r.findings) {
    auto it = open.find(fingerprint(d, sources));
    if (it == open.end()) {
      fresh.push_back(std::move(d));
      continue;
    }
    open.erase(it);
    r.suppressed.push_back({std::move(d), "baseline", "in the baseline", b.file});
  }
  r.findings = std::move(fresh);
  BaselineUse use;
  use.file = b.file;
  for (const auto& e : b.entries) {
    bool left = false;
    for (auto [lo, hi] = open.equal_range(e.fingerprint); lo != hi; ++lo)
      if (lo->second == &e) left = true;
    if (!left) continue;
    Diagnostic d;
    d.rule_id = e.rule;
    d.file = e.file;
    d.path = e.path;
    d.severity = e.severity;
    d.line = e.line;
    d.column = e.column;
    d.message = e.message;
    use.absent.push_back(std::move(d));
  }
  r.baseline = std::move(use);
}

}  // namespace trainimg::policy
