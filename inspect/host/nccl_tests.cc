// SPDX-License-Identifier: GPL-3.0-or-later
// nccl-tests output (all_reduce_perf and friends): a '#' header naming the
// columns (out-of-place group, then in-place group), one row per size, then
// "# Out of bounds values : N OK|FAILED" and "# Avg bus bandwidth : X".
#include <cctype>
#include <charconv>
#include <cmath>
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

// A result row starts with its size: a number (with the separators of a
// localised run, or a sign: refused later, with a hint). Not an NCCL log line
// of a host whose name starts with a digit ("3767c65d25c4:880:880 [1] NCCL
// INFO"), not an Open MPI "-----" banner.
bool is_row_start(std::string_view t) {
  if (t.starts_with('-')) t.remove_prefix(1);
  return !t.empty() && std::isdigit(static_cast<unsigned char>(t[0])) &&
         t.find_first_not_of("0123456789,.") == std::string_view::npos;
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

// A #wrong count: nccl-tests prints it with %6g, so 1000000 is "1e+06".
std::optional<long long> to_count(std::string_view s) {
  if (auto v = to_int(s)) return v;
  double d = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), d);
  if (ec != std::errc() || p != s.data() + s.size() || !(d >= 0) || d > 9.2e18 || d != std::floor(d))
    return std::nullopt;
  return static_cast<long long>(d);
}

}  // namespace

NcclTests parse_nccl_tests(std::string_view text, const std::string& file) {
  NcclTests t;
  auto lines = split_lines(text);
  int last_nonempty = 0;
  for (int i = 0; i < static_cast<int>(lines.size()); ++i)
    if (!trim(lines[i]).empty()) last_nonempty = i + 1;
  std::vector<std::string> header;    // column names without '#'
  size_t oop_begin = 0, oop_end = 0;  // the out-of-place group [time, next time)
  int n = 0;
  for (auto full_line : lines) {
    ++n;
    // srun --label / mpirun --tag-output prefixes; columns stay those of the file.
    std::string_view line = strip_label(full_line);
    const int shift = static_cast<int>(line.data() - full_line.data());
    auto tr = trim(line);
    if (tr.empty()) continue;
    // Comment lines start with '#'; some tools (dstack) strip every leading
    // '#' of the output they show: the same lines without it are read too.
    const bool hashed = tr.front() == '#';
    {
      bool known = true;
      auto body = hashed ? trim(tr.substr(1)) : tr;
      auto toks = tokens(body);
      if (toks.size() >= 3 && toks[0].text == "size" && toks[1].text == "count") {
        header.clear();
        for (auto& k : toks) header.emplace_back(k.text == "wrong" ? "#wrong" : std::string(k.text));
        oop_begin = oop_end = 0;
        for (size_t i = 0; i < header.size(); ++i)
          if (header[i] == "time" || header[i] == "cputime") {
            if (oop_begin == 0)
              oop_begin = i;
            else if (oop_end == 0)
              oop_end = i;
          }
      } else if (body.starts_with("Out of bounds values")) {
        size_t colon = body.find(':');
        auto rest = tokens(body.substr(colon == std::string_view::npos ? body.size() : colon + 1));
        if (!rest.empty()) {
          auto v = to_int(rest[0].text);
          if (!v)
            fail_at(file, n, 1, full_line,
                    "`Out of bounds values` is \"" + std::string(rest[0].text) + "\", not a count");
          // Several runs saved into one file: a later "0 OK" must not hide
          // an earlier failure.
          if (!t.out_of_bounds || *v > *t.out_of_bounds) {
            t.out_of_bounds = *v;
            t.out_of_bounds_line = n;
          }
        }
      } else if (body.starts_with("Avg bus bandwidth")) {
        size_t colon = body.find(':');
        auto rest = tokens(body.substr(colon == std::string_view::npos ? body.size() : colon + 1));
        if (!rest.empty()) {
          Tok tk = rest[0];
          tk.column = static_cast<int>(full_line.find(tk.text)) + 1;
          t.avg_busbw = to_double(tk, full_line, n, file);
        }
      } else if (!hashed) {
        known = false;  // not a line nccl-tests comments: maybe a row
      }
      if (known) continue;
    }
    // nccl-tests' own abort message (testStreamSynchronize, NCCLCHECK, CUDACHECK).
    if (t.failure.empty())
      for (std::string_view what : {"Test NCCL failure", "Test CUDA failure", "Test failure"})
        if (tr.find(what) != std::string_view::npos) {
          t.failure = std::string(tr.substr(tr.find(what)));
          t.failure_line = n;
          break;
        }
    auto toks = tokens(line);
    for (auto& tk : toks) tk.column += shift;
    if (header.empty() || !is_row_start(toks[0].text)) continue;  // other tools' chatter
    // -T (report_timestamps) adds a "timestamp" column printed as two words.
    const size_t expected = header.size() + (header.back() == "timestamp" ? 1 : 0);
    // Trace replay leaves the out-of-place group blank: the row holds only
    // the in-place one, so the tokens map past the out-of-place columns.
    const size_t oop_width = oop_end > oop_begin ? oop_end - oop_begin : 0;
    bool in_place_only = oop_width > 0 && toks.size() + oop_width == expected;
    if (in_place_only) {  // the blank group is a wide gap; a cut-off row has none
      const Tok& before = toks[oop_begin - 1];
      in_place_only = toks[oop_begin].column - (before.column + static_cast<int>(before.text.size())) >= 20;
    }
    if (toks.size() != expected && !in_place_only) {
      if (n == last_nonempty && toks.size() < expected) {
        t.truncated_row = true;
        t.truncated_line = n;
        continue;
      }
      fail_at(file, n, toks.back().column, full_line,
              "row has " + std::to_string(toks.size()) + " columns, the header names " +
                  std::to_string(expected));
    }
    if (in_place_only) toks.insert(toks.begin() + static_cast<long>(oop_begin), oop_width, Tok{"", 0});
    NcclTestsRow r;
    r.line = n;
    int busbw_seen = 0, wrong_seen = 0;
    for (size_t i = 0; i < header.size(); ++i) {
      const auto& h = header[i];
      const Tok& tk = toks[i];
      if (h == "size" || h == "count") {
        if (tk.text.find(',') != std::string_view::npos || tk.text.find('.') != std::string_view::npos)
          fail_at(file, n, tk.column, full_line,
                  "size \"" + std::string(tk.text) + "\" has a separator (localised output?)",
                  "run nccl-tests with LC_ALL=C and save its output unchanged");
        auto v = to_int(tk.text);
        if (!v || *v < 0)
          fail_at(file, n, tk.column, full_line, "\"" + std::string(tk.text) + "\" is not a whole number");
        (h == "size" ? r.size : r.count) = *v;
      } else if (tk.text.empty()) {  // the blank out-of-place group of an in-place-only row
        busbw_seen += h == "busbw";
        wrong_seen += h == "#wrong";
      } else if (h == "busbw") {
        double v = to_double(tk, full_line, n, file);
        (busbw_seen++ == 0 ? r.oop_busbw : r.ip_busbw) = v;
      } else if (h == "#wrong") {
        std::optional<long long> w;
        ++t.wrong_cells;
        t.wrong_na += tk.text == "N/A";
        if (!tk.text.empty() && tk.text != "N/A") {
          w = to_count(tk.text);
          if (!w)
            fail_at(file, n, tk.column, full_line, "#wrong \"" + std::string(tk.text) + "\" is not a count");
        }
        (wrong_seen++ == 0 ? r.oop_wrong : r.ip_wrong) = w;
      } else if (h == "time" || h == "algbw") {
        to_double(tk, full_line, n, file);  // validated: a mangled number is unreadable input
      }
    }
    t.rows.push_back(r);
  }
  return t;
}

}  // namespace trainimg::host
