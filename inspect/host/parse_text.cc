// SPDX-License-Identifier: GPL-3.0-or-later
// Shared line handling of the probe parsers.
#include <algorithm>
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

void fail_at(const std::string& file, int line, int column, std::string_view line_text,
             const std::string& message, const std::string& hint) {
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

std::string_view strip_label(std::string_view line) {
  auto is_digit = [](char c) { return c >= '0' && c <= '9'; };
  while (true) {
    // srun --label: the task id, right-aligned, then ": ".
    size_t i = line.find_first_not_of(' ');
    size_t d = i;
    while (d < line.size() && is_digit(line[d])) ++d;
    if (i != std::string_view::npos && d > i && d < line.size() && line[d] == ':' &&
        (d + 1 == line.size() || line[d + 1] == ' ' || line[d + 1] == '\t')) {
      line.remove_prefix(std::min(line.size(), d + 2));
      continue;
    }
    // mpirun --tag-output: "[job,rank]<stdout>:" (Open MPI 5 adds a space),
    // indented where a README or `kubectl logs` paste indents it.
    if (size_t b = line.find_first_not_of(" \t"); b != std::string_view::npos && line[b] == '[') {
      std::string_view tagged = line.substr(b);
      size_t close = tagged.find(']');
      if (close != std::string_view::npos && close > 1 &&
          tagged.substr(1, close - 1).find_first_not_of("0123456789,") == std::string_view::npos) {
        std::string_view rest = tagged.substr(close + 1);
        if (rest.starts_with("<stdout>:") || rest.starts_with("<stderr>:")) {
          rest.remove_prefix(9);
          if (rest.starts_with(' ')) rest.remove_prefix(1);
          line = rest;
          continue;
        }
      }
    }
    return line;
  }
}

std::optional<std::string> first_line(std::string_view text) {
  for (auto l : split_lines(text))
    if (!trim(l).empty()) return std::string(trim(l));
  return std::nullopt;
}

}  // namespace trainimg::host
