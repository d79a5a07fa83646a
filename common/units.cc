// SPDX-License-Identifier: GPL-3.0-or-later
#include "common/units.h"

#include <cctype>
#include <cstdio>
#include <limits>
#include <string>

namespace trainimg {

std::optional<uint64_t> parse_byte_size(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  size_t i = 0;
  uint64_t n = 0;
  constexpr uint64_t kMax = static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
  for (; i < s.size() && std::isdigit(static_cast<unsigned char>(s[i])); ++i) {
    if (n > (kMax - (s[i] - '0')) / 10) return std::nullopt;
    n = n * 10 + static_cast<uint64_t>(s[i] - '0');
  }
  if (i == 0) return std::nullopt;
  std::string unit(s.substr(i));
  for (char& c : unit) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  int shift = 0;
  if (!unit.empty() && unit != "B") {
    const std::string letters = "KMGT";
    size_t u = letters.find(unit[0]);
    if (u == std::string::npos || !(unit.size() == 1 || unit.substr(1) == "IB")) return std::nullopt;
    shift = 10 * static_cast<int>(u + 1);
  }
  if (n > (kMax >> shift)) return std::nullopt;
  return n << shift;
}

namespace {
constexpr const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
}

std::string format_byte_size(uint64_t bytes) {
  if (bytes < 1024) return std::to_string(bytes) + " bytes";
  double v = double(bytes);
  int u = 0;
  while (v >= 1023.95 && u < 6) {  // 1023.96 KiB prints as 1.0 MiB, not 1024.0 KiB
    v /= 1024;
    ++u;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f %s", v, kUnits[u]);
  return buf;
}

std::string format_exact_byte_size(uint64_t bytes) {
  int u = 0;
  while (u < 6 && bytes != 0 && bytes % 1024 == 0) {
    bytes /= 1024;
    ++u;
  }
  return std::to_string(bytes) + " " + kUnits[u];
}

}  // namespace trainimg
