// SPDX-License-Identifier: GPL-3.0-or-later
// /proc/driver/nvidia-fs/stats (seed 004 §1 and §4 "How to read the
// nvidia-fs counters").
#include <cctype>

#include "inspect/host/parsers.h"

namespace trainimg::host {

namespace {
std::optional<std::string> version_after(std::string_view line, std::string_view key) {
  size_t at = line.find(key);
  if (at == std::string_view::npos) return std::nullopt;
  auto rest = trim(line.substr(at + key.size()));
  size_t end = rest.find_first_of(") \t");
  auto v = rest.substr(0, end);
  if (v.empty()) return std::nullopt;
  return std::string(v);
}
}  // namespace

NvfsStats parse_nvfs_stats(std::string_view text, const std::string& file) {
  NvfsStats s;
  int n = 0;
  for (auto line : split_lines(text)) {
    ++n;
    if (auto v = version_after(line, "NVFS Driver(version:")) s.driver_version = v;
    else if (auto g = version_after(line, "GDS Version:")) s.gds_version = g;
    size_t sep = line.find(" : ");
    size_t width = 3;
    if (sep == std::string_view::npos) {
      sep = line.find(':');
      width = 1;
    }
    if (sep == std::string_view::npos) continue;
    std::string_view body = line.substr(sep + width);
    if (body.find('=') == std::string_view::npos) continue;
    NvfsStats::Counter c;
    c.line = n;
    size_t pos = 0;
    while (pos < body.size()) {
      size_t start = body.find_first_not_of(" \t", pos);
      if (start == std::string_view::npos) break;
      size_t end = body.find_first_of(" \t", start);
      std::string_view tok = body.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start);
      size_t eq = tok.find('=');
      if (eq != std::string_view::npos) {
        std::string_view val = tok.substr(eq + 1);
        auto num = to_int(val);
        if (num) c.fields[std::string(tok.substr(0, eq))] = *num;
        else if (!val.empty() && std::isdigit(static_cast<unsigned char>(val[0])))
          fail_at(file, n, static_cast<int>(sep + width + start + eq + 2), line,
                  "counter value \"" + std::string(val) + "\" is not an integer (localised number?)",
                  "save the file exactly as `cat /proc/driver/nvidia-fs/stats` prints it");
      }
      if (end == std::string_view::npos) break;
      pos = end;
    }
    // "IO stats: Enabled" adds a second Reads/Writes line (bandwidth,
    // latency): merge it, keeping the first line's counts and position.
    auto [it, fresh] = s.counters.try_emplace(std::string(trim(line.substr(0, sep))), std::move(c));
    if (!fresh) it->second.fields.merge(c.fields);
  }
  return s;
}

std::vector<LnetNi> parse_lnet(std::string_view text, const std::string& file) {
  std::vector<LnetNi> nis;
  int n = 0;
  auto value_of = [](std::string_view t, std::string_view key) { return trim(t.substr(key.size())); };
  for (auto line : split_lines(text)) {
    ++n;
    auto t = trim(line);
    if (t.substr(0, 2) == "- ") t = trim(t.substr(2));
    if (t.substr(0, 4) == "nid:") {
      LnetNi ni;
      ni.nid = std::string(value_of(t, "nid:"));
      ni.line = n;
      nis.push_back(std::move(ni));
    } else if (t.substr(0, 7) == "status:" && !nis.empty()) {
      nis.back().status = std::string(value_of(t, "status:"));
    } else if (t.substr(0, 11) == "send_count:" || t.substr(0, 11) == "recv_count:") {
      bool send = t[0] == 's';
      auto v = value_of(t, "send_count:");
      auto num = to_int(v);
      if (!num)
        fail_at(file, n, static_cast<int>(line.find(v) + 1), line,
                "\"" + std::string(v) + "\" is not a message count (localised number?)");
      auto& slot_of = [&]() -> LnetNi& {
        bool need_new = nis.empty() || (send ? nis.back().send_count.has_value() : nis.back().recv_count.has_value());
        if (need_new) {
          nis.emplace_back();
          nis.back().line = n;
        }
        return nis.back();
      }();
      (send ? slot_of.send_count : slot_of.recv_count) = *num;
    }
  }
  return nis;
}

}  // namespace trainimg::host
