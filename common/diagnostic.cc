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

Finding::Finding(const RuleInfo& rule, std::string message) {
  d_.severity = rule.severity;
  d_.rule_id = rule.id;
  d_.message = std::move(message);
  d_.hint = rule.fix;
  d_.seed = rule.seed;
}

Finding& Finding::severity(Severity s) {
  d_.severity = s;
  return *this;
}

Finding& Finding::hint(std::string h) {
  d_.hint = std::move(h);
  return *this;
}

Finding& Finding::in(std::string file) {
  d_.file = std::move(file);
  return *this;
}

Finding& Finding::at(int line, int column, int length, std::string source_line) {
  d_.line = line;
  d_.column = column;
  d_.length = length;
  d_.source_line = std::move(source_line);
  return *this;
}

namespace {

// Columns of [offset, offset + length) on its first line: at least one, at
// most up to the line's end.
int caret_length(const SourceFile& src, SourceFile::LineCol lc, size_t length) {
  int room = static_cast<int>(src.line_text(lc.line).size()) - lc.column + 1;
  return std::max(1, std::min(static_cast<int>(length), room));
}

}  // namespace

Finding& Finding::at(const SourceFile& src, size_t offset, size_t length) {
  auto lc = src.line_col(offset);
  d_.file = src.name();
  d_.line = lc.line;
  d_.column = lc.column;
  d_.source_line = std::string(src.line_text(lc.line));
  d_.length = caret_length(src, lc, length);
  return *this;
}

Finding& Finding::path(std::string p, std::string layer) {
  d_.path = std::move(p);
  d_.layer = std::move(layer);
  return *this;
}

Finding& Finding::related(RelatedLocation r) {
  d_.related.push_back(std::move(r));
  return *this;
}

Finding& Finding::related(const SourceFile& src, size_t offset, size_t length, std::string message) {
  auto lc = src.line_col(offset);
  return related(
      RelatedLocation{src.name(), lc.line, lc.column, caret_length(src, lc, length), std::move(message)});
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
