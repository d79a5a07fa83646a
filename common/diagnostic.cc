// SPDX-License-Identifier: GPL-3.0-or-later
#include "common/diagnostic.h"

#include <algorithm>
#include <tuple>

namespace trainimg {

std::string_view to_string(Severity s) {
  switch (s) {
    case Severity::Info: return "info";
    case Severity::Warning: return "warning";
    case Severity::Error: return "error";
  }
  return "error";
}

std::optional<Severity> parse_severity(std::string_view s) {
  if (s == "info") return Severity::Info;
  if (s == "warning") return Severity::Warning;
  if (s == "error") return Severity::Error;
  return std::nullopt;
}

std::string Diagnostic::location() const {
  std::string out = file;
  if (line > 0) {
    out += ":" + std::to_string(line);
    if (column > 0) out += ":" + std::to_string(column);
  }
  return out;
}

void sort_diagnostics(std::vector<Diagnostic>& d) {
  std::stable_sort(d.begin(), d.end(), [](const Diagnostic& a, const Diagnostic& b) {
    return std::tie(a.file, a.line, a.column, a.path, a.rule_id, a.message) <
           std::tie(b.file, b.line, b.column, b.path, b.rule_id, b.message);
  });
}

std::optional<Severity> max_severity(const std::vector<Diagnostic>& d) {
  std::optional<Severity> out;
  for (const auto& x : d)
    if (!out || x.severity > *out) out = x.severity;
  return out;
}

}  // namespace trainimg
