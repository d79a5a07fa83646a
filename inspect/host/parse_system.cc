// SPDX-License-Identifier: GPL-3.0-or-later
// Generic system probes: lsmod, ls -l, ulimit -l, df -h, apt-mark, lfs.
#include <cctype>

#include "inspect/host/parsers.h"

namespace trainimg::host {

namespace {
std::vector<std::string_view> fields(std::string_view line) {
  std::vector<std::string_view> out;
  size_t pos = 0;
  while (pos < line.size()) {
    size_t start = line.find_first_not_of(" \t", pos);
    if (start == std::string_view::npos) break;
    size_t end = line.find_first_of(" \t", start);
    out.push_back(line.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start));
    if (end == std::string_view::npos) break;
    pos = end;
  }
  return out;
}
bool starts_with(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }
}  // namespace

std::vector<std::string> parse_lsmod(std::string_view text) {
  std::vector<std::string> mods;
  for (auto line : split_lines(text)) {
    auto f = fields(line);
    if (f.empty() || (f[0] == "Module" && f.size() > 1 && f[1] == "Size")) continue;
    mods.emplace_back(f[0]);
  }
  return mods;
}

bool parse_ls_char_device(std::string_view text) {
  for (auto line : split_lines(text)) {
    auto t = trim(line);
    if (!t.empty() && t.front() == 'c') return true;
  }
  return false;
}

std::string parse_ulimit(std::string_view text, const std::string& file) {
  auto lines = split_lines(text);
  int n = 0;
  for (auto line : lines) {
    ++n;
    auto t = trim(line);
    if (t.empty()) continue;
    // `ulimit -a` names each limit: "max locked memory (kbytes, -l) 8192".
    if (t.find("(kbytes, -l)") != std::string_view::npos)
      t = trim(t.substr(t.find(')') + 1));
    else if (t.find(", -") != std::string_view::npos && t.find(')') != std::string_view::npos)
      continue;  // another limit of `ulimit -a`
    if (t == "unlimited" || to_int(t)) return std::string(t);
    fail_at(file, n, 1, line, "`ulimit -l` printed \"" + std::string(t) + "\", neither \"unlimited\" nor a number");
  }
  fail_at(file, 1, 1, "", "`ulimit -l` printed nothing");
}

DfRow parse_df(std::string_view text, const std::string& file) {
  auto lines = split_lines(text);
  std::vector<std::string_view> acc;
  int n = 0;
  int first = 0;
  for (auto line : lines) {
    ++n;
    auto f = fields(line);
    if (f.empty()) continue;
    if (f[0] == "Filesystem") continue;
    if (acc.empty()) first = n;
    acc.insert(acc.end(), f.begin(), f.end());
    if (acc.size() >= 6) break;  // a long device name wraps onto its own line
  }
  if (acc.size() < 6) {
    if (acc.empty()) fail_at(file, n > 0 ? n : 1, 1, "", "`df` printed no filesystem row (truncated?)");
    fail_at(file, first, 1, lines[first - 1],
            "`df` row has " + std::to_string(acc.size()) + " fields, expected 6 (truncated?)");
  }
  // "Mounted on" may hold spaces: everything after the fifth field.
  DfRow r{std::string(acc[0]), std::string(acc[1]), std::string(acc[2]), std::string(acc[3]), std::string(acc[4]), {}};
  for (size_t i = 5; i < acc.size(); ++i) r.mounted_on += (i > 5 ? " " : "") + std::string(acc[i]);
  return r;
}

std::vector<std::string> parse_showhold(std::string_view text) {
  std::vector<std::string> held;
  for (auto line : split_lines(text)) {
    auto t = trim(line);
    if (!t.empty()) held.emplace_back(t);
  }
  return held;
}

bool kernel_is_held(const std::vector<std::string>& held) {
  for (const auto& p : held)
    if (starts_with(p, "linux-image") || starts_with(p, "linux-modules") || starts_with(p, "linux-aws")) return true;
  return false;
}

std::optional<std::string> parse_lfs_version(std::string_view text) {
  for (auto line : split_lines(text)) {
    auto f = fields(line);
    for (size_t i = 0; i < f.size(); ++i)
      if (!f[i].empty() && std::isdigit(static_cast<unsigned char>(f[i][0]))) return std::string(f[i]);
  }
  return std::nullopt;
}

}  // namespace trainimg::host
