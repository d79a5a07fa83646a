// SPDX-License-Identifier: GPL-3.0-or-later
#include "common/version.h"

#include <cctype>
#include <charconv>
#include <limits>

namespace trainimg {

namespace {
int order(char c) {
  if (std::isdigit(static_cast<unsigned char>(c))) return 0;
  if (std::isalpha(static_cast<unsigned char>(c))) return c;
  if (c == '~') return -1;
  if (c) return c + 256;
  return 0;
}

// dpkg's verrevcmp.
int verrevcmp(std::string_view a, std::string_view b) {
  size_t i = 0, j = 0;
  while (i < a.size() || j < b.size()) {
    int first_diff = 0;
    while ((i < a.size() && !std::isdigit(static_cast<unsigned char>(a[i]))) ||
           (j < b.size() && !std::isdigit(static_cast<unsigned char>(b[j])))) {
      int ac = i < a.size() ? order(a[i]) : 0;
      int bc = j < b.size() ? order(b[j]) : 0;
      if (ac != bc) return ac - bc;
      ++i;
      ++j;
    }
    while (i < a.size() && a[i] == '0') ++i;
    while (j < b.size() && b[j] == '0') ++j;
    while (i < a.size() && j < b.size() && std::isdigit(static_cast<unsigned char>(a[i])) &&
           std::isdigit(static_cast<unsigned char>(b[j]))) {
      if (!first_diff) first_diff = a[i] - b[j];
      ++i;
      ++j;
    }
    if (i < a.size() && std::isdigit(static_cast<unsigned char>(a[i]))) return 1;
    if (j < b.size() && std::isdigit(static_cast<unsigned char>(b[j]))) return -1;
    if (first_diff) return first_diff;
  }
  return 0;
}

struct Parts {
  long epoch = 0;
  std::string_view upstream, revision;
};

Parts split(std::string_view v) {
  Parts p;
  if (auto c = v.find(':'); c != std::string_view::npos) {
    bool digits = c > 0;
    for (size_t k = 0; k < c; ++k) digits = digits && std::isdigit(static_cast<unsigned char>(v[k]));
    if (digits) {
      // dpkg refuses an epoch above INT_MAX; a comparison has no way to
      // refuse, so a longer one saturates (it still sorts after the rest).
      if (std::from_chars(v.data(), v.data() + c, p.epoch).ec == std::errc::result_out_of_range)
        p.epoch = std::numeric_limits<long>::max();
      v.remove_prefix(c + 1);
    }
  }
  if (auto d = v.rfind('-'); d != std::string_view::npos) {
    p.upstream = v.substr(0, d);
    p.revision = v.substr(d + 1);
  } else {
    p.upstream = v;
  }
  return p;
}
}  // namespace

int compare_versions(std::string_view a, std::string_view b) {
  Parts pa = split(a), pb = split(b);
  if (pa.epoch != pb.epoch) return pa.epoch < pb.epoch ? -1 : 1;
  if (int r = verrevcmp(pa.upstream, pb.upstream)) return r < 0 ? -1 : 1;
  int r = verrevcmp(pa.revision, pb.revision);
  return r < 0 ? -1 : (r > 0 ? 1 : 0);
}

std::string release_of(std::string_view v) {
  Parts p = split(v);
  std::string_view u = p.upstream;
  // Keep the leading run of digits and dots; stop at the first letter or
  // other character ("2.6.0amzn1.0" -> "2.6.0", "4.1.7rc1" -> "4.1.7").
  size_t n = 0;
  while (n < u.size() && (std::isdigit(static_cast<unsigned char>(u[n])) || u[n] == '.')) ++n;
  std::string out(u.substr(0, n));
  while (!out.empty() && out.back() == '.') out.pop_back();
  return out.empty() ? std::string(u) : out;
}

bool same_release(std::string_view a, std::string_view b) { return release_of(a) == release_of(b); }

bool looks_like_version(std::string_view v) {
  if (v.empty() || !std::isdigit(static_cast<unsigned char>(v[0]))) return false;
  for (char c : v)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '+' && c != '~' && c != ':' && c != '-')
      return false;
  return true;
}

}  // namespace trainimg
