// SPDX-License-Identifier: GPL-3.0-or-later
// nccl-tests output (all_reduce_perf and friends): a '#' header naming the
// columns (out-of-place group, then in-place group), one row per size, then
// "# Out of bounds values : N OK|FAILED" and "# Avg bus bandwidth : X".
#include <cctype>
#include <charconv>
#include <limits>

#include "inspect/host/parsers.h"

namespace trainimg::host {

namespace {

struct Tok {
  std::string_view text;
  int column;  // 1-based
};

std::vector<Tok> tokens(std::string_view line) {
  std::vector<Tok> out;
  size_t pos = 0;
  while (pos < line.size()) {
    size_t s = line.find_first_not_of(" \t", pos);
    if (s == std::string_view::npos) break;
    size_t e = line.find_first_of(" \t", s);
    if (e == std::string_view::npos) e = line.size();
    out.push_back({line.substr(s, e - s), static_cast<int>(s) + 1});
    pos = e;
  }
  return out;
}

bool is_number_start(std::string_view t) {
  return !t.empty() && (std::isdigit(static_cast<unsigned char>(t[0])) || t[0] == '-');
}

double to_double(const Tok& t, std::string_view line, int n, const std::string& file) {
  if (t.text.find(',') != std::string_view::npos)
    fail_at(file, n, t.column, line, "number \"" + std::string(t.text) + "\" uses ',' (localised output?)",
            "run nccl-tests with LC_ALL=C and save its output unchanged");
  double v = 0;
  auto [p, ec] = std::from_chars(t.text.data(), t.text.data() + t.text.size(), v);
  if (ec != std::errc() || p != t.text.data() + t.text.size())
    fail_at(file, n, t.column, line, "\"" + std::string(t.text) + "\" is not a number");
  return v;
}

}  // namespace

NcclTests parse_nccl_tests(std::string_view text, const std::string& file) {
  NcclTests t;
  auto lines = split_lines(text);
  int last_nonempty = 0;
  for (int i = 0; i < static_cast<int>(lines.size()); ++i)
    if (!trim(lines[i]).empty()) last_nonempty = i + 1;
  std::vector<std::string> header;  // column names without '#'
  int n = 0;
  for (auto line : lines) {
    ++n;
    auto tr = trim(line);
    if (tr.empty()) continue;
    if (tr.front() == '#') {
      auto body = trim(tr.substr(1));
      auto toks = tokens(body);
      if (toks.size() >= 3 && toks[0].text == "size" && toks[1].text == "count") {
        header.clear();
        for (auto& k : toks) header.emplace_back(k.text);
      } else if (body.starts_with("Out of bounds values")) {
        size_t colon = body.find(':');
        auto rest = tokens(body.substr(colon == std::string_view::npos ? body.size() : colon + 1));
        if (!rest.empty()) {
          auto v = to_int(rest[0].text);
          if (!v) fail_at(file, n, 1, line, "`Out of bounds values` is \"" + std::string(rest[0].text) + "\", not a count");
          t.out_of_bounds = *v;
          t.out_of_bounds_line = n;
        }
      } else if (body.starts_with("Avg bus bandwidth")) {
        size_t colon = body.find(':');
        auto rest = tokens(body.substr(colon == std::string_view::npos ? body.size() : colon + 1));
        if (!rest.empty()) {
          Tok tk = rest[0];
          tk.column = static_cast<int>(line.find(tk.text)) + 1;
          t.avg_busbw = to_double(tk, line, n, file);
        }
      }
      continue;
    }
    auto toks = tokens(line);
    if (header.empty() || !is_number_start(toks[0].text)) continue;  // other tools' chatter
    if (toks.size() != header.size()) {
      if (n == last_nonempty && toks.size() < header.size()) {
        t.truncated_row = true;
        t.truncated_line = n;
        continue;
      }
      fail_at(file, n, toks.back().column, line,
              "row has " + std::to_string(toks.size()) + " columns, the header names " + std::to_string(header.size()));
    }
    NcclTestsRow r;
    r.line = n;
    int busbw_seen = 0, wrong_seen = 0;
    for (size_t i = 0; i < header.size(); ++i) {
      const auto& h = header[i];
      const Tok& tk = toks[i];
      if (h == "size" || h == "count") {
        if (tk.text.find(',') != std::string_view::npos || tk.text.find('.') != std::string_view::npos)
          fail_at(file, n, tk.column, line, "size \"" + std::string(tk.text) + "\" has a separator (localised output?)",
                  "run nccl-tests with LC_ALL=C and save its output unchanged");
        auto v = to_int(tk.text);
        if (!v) fail_at(file, n, tk.column, line, "\"" + std::string(tk.text) + "\" is not a whole number");
        (h == "size" ? r.size : r.count) = *v;
      } else if (h == "busbw") {
        double v = to_double(tk, line, n, file);
        (busbw_seen++ == 0 ? r.oop_busbw : r.ip_busbw) = v;
      } else if (h == "#wrong") {
        std::optional<long long> w;
        if (tk.text != "N/A") {
          w = to_int(tk.text);
          if (!w) fail_at(file, n, tk.column, line, "#wrong \"" + std::string(tk.text) + "\" is not a count");
        }
        (wrong_seen++ == 0 ? r.oop_wrong : r.ip_wrong) = w;
      } else if (h == "time" || h == "algbw") {
        to_double(tk, line, n, file);  // validated: a mangled number is unreadable input
      }
    }
    t.rows.push_back(r);
  }
  return t;
}

std::string format_bytes(long long b) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  while (u < 4 && b != 0 && b % 1024 == 0) {
    b /= 1024;
    ++u;
  }
  return std::to_string(b) + " " + units[u];
}

std::optional<long long> parse_size(std::string_view s) {
  s = trim(s);
  size_t i = 0;
  while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) ++i;
  auto num = to_int(s.substr(0, i));
  if (!num) return std::nullopt;
  std::string_view unit = s.substr(i);
  long long mul = 1;
  if (unit.empty() || unit == "B") mul = 1;
  else if (unit == "K" || unit == "k" || unit == "KiB") mul = 1LL << 10;
  else if (unit == "M" || unit == "m" || unit == "MiB") mul = 1LL << 20;
  else if (unit == "G" || unit == "g" || unit == "GiB") mul = 1LL << 30;
  else return std::nullopt;
  if (*num > std::numeric_limits<long long>::max() / mul) return std::nullopt;  // no size a long long holds
  return *num * mul;
}

}  // namespace trainimg::host
