// SPDX-License-Identifier: GPL-3.0-or-later
// Shared line handling of the probe parsers.
#include <charconv>

#include "common/error.h"
#include "inspect/host/parsers.h"

namespace trainimg::host {

std::vector<std::string_view> split_lines(std::string_view text) {
  std::vector<std::string_view> out;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    size_t end = nl == std::string_view::npos ? text.size() : nl;
    std::string_view line = text.substr(pos, end - pos);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    out.push_back(line);
    if (nl == std::string_view::npos) break;
    pos = nl + 1;
  }
  return out;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r' || s.front() == '\n'))
    s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r' || s.back() == '\n'))
    s.remove_suffix(1);
  return s;
}

void fail_at(const std::string& file, int line, int column, std::string_view line_text, const std::string& message,
             const std::string& hint) {
  Diagnostic d;
  d.file = file;
  d.line = line;
  d.column = column;
  d.length = 1;
  d.source_line = std::string(line_text);
  d.message = message;
  d.hint = hint;
  throw Error(d);
}

std::optional<long long> to_int(std::string_view s) {
  long long v = 0;
  if (!s.empty() && s.front() == '+') s.remove_prefix(1);
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size() || s.empty()) return std::nullopt;
  return v;
}

std::optional<std::string> first_line(std::string_view text) {
  for (auto l : split_lines(text))
    if (!trim(l).empty()) return std::string(trim(l));
  return std::nullopt;
}

}  // namespace trainimg::host
