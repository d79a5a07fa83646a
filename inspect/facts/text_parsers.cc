// SPDX-License-Identifier: GPL-3.0-or-later
#include "inspect/facts/text_parsers.h"

#include <cctype>
#include <nlohmann/json.hpp>

namespace trainimg::inspect::facts {

namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

// Calls f(line) for every line (without '\n' or a trailing '\r').
template <class F>
void for_each_line(std::string_view text, F f) {
  while (!text.empty()) {
    size_t e = text.find('\n');
    std::string_view line = text.substr(0, e);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    f(line);
    if (e == std::string_view::npos) break;
    text.remove_prefix(e + 1);
  }
}

std::vector<std::string_view> words(std::string_view s, std::string_view seps) {
  std::vector<std::string_view> out;
  size_t b = 0;
  while (b < s.size()) {
    size_t e = s.find_first_of(seps, b);
    if (e == std::string_view::npos) e = s.size();
    if (e > b) out.push_back(s.substr(b, e - b));
    b = e + 1;
  }
  return out;
}

bool starts_with_digit(std::string_view s) { return !s.empty() && std::isdigit(static_cast<unsigned char>(s[0])); }

const char* const kRpmArches[] = {".x86_64", ".aarch64", ".noarch", ".i686", ".amd64", ".arm64"};

}  // namespace

std::optional<Package> parse_package_word(std::string_view w) {
  w = trim(w);
  if (w.empty()) return std::nullopt;
  // An rpm arch suffix first: ".x86_64" itself contains '_'.
  std::string arch;
  for (const char* a : kRpmArches) {
    std::string_view suffix(a);
    if (w.size() > suffix.size() && w.ends_with(suffix)) {
      arch = std::string(suffix.substr(1));
      w.remove_suffix(suffix.size());
      break;
    }
  }
  // deb form: name_version[_arch]; '_' never appears in deb names.
  if (arch.empty() && w.find('_') != std::string_view::npos) {
    auto parts = words(w, "_");
    if (parts.size() < 2 || w.front() == '_') return std::nullopt;
    return Package{std::string(parts[0]), std::string(parts[1]), parts.size() >= 3 ? std::string(parts[2]) : ""};
  }
  // rpm form: the name ends before the first "-<digit>".
  for (size_t i = 1; i + 1 < w.size(); ++i)
    if (w[i] == '-' && std::isdigit(static_cast<unsigned char>(w[i + 1])))
      return Package{std::string(w.substr(0, i)), std::string(w.substr(i + 1)), arch};
  return std::nullopt;
}

EfaManifest parse_efa_manifest(std::string_view text) {
  EfaManifest m;
  constexpr std::string_view kKey = "EFA installer version:";
  for_each_line(text, [&](std::string_view line) {
    line = trim(line);
    if (line.starts_with('#')) {
      if (auto k = line.find(kKey); k != std::string_view::npos && m.installer_version.empty())
        m.installer_version = std::string(trim(line.substr(k + kKey.size())));
      return;
    }
    for (auto w : words(line, " \t"))
      if (auto p = parse_package_word(w)) m.packages.push_back(std::move(*p));
  });
  return m;
}

std::map<std::string, std::string> parse_dpkg_status(std::string_view text, bool (*keep)(std::string_view)) {
  std::map<std::string, std::string> out;
  std::string name, version, status;
  auto flush = [&] {
    if (!name.empty() && !version.empty() && status == "install ok installed" && (!keep || keep(name)))
      out[name] = version;
    name.clear();
    version.clear();
    status.clear();
  };
  for_each_line(text, [&](std::string_view line) {
    if (trim(line).empty()) return flush();
    if (line.front() == ' ' || line.front() == '\t') return;  // continuation
    auto c = line.find(':');
    if (c == std::string_view::npos) return;
    std::string_view key = line.substr(0, c), val = trim(line.substr(c + 1));
    if (key == "Package") name = val;
    else if (key == "Version") version = val;
    else if (key == "Status") status = val;
  });
  flush();
  return out;
}

std::string parse_pc_version(std::string_view text) {
  std::map<std::string, std::string> vars;
  std::string version;
  auto expand = [&](std::string_view v) {
    std::string out;
    for (size_t i = 0; i < v.size(); ++i) {
      if (v[i] == '$' && i + 1 < v.size() && v[i + 1] == '{') {
        size_t e = v.find('}', i);
        if (e != std::string_view::npos) {
          auto it = vars.find(std::string(v.substr(i + 2, e - i - 2)));
          if (it != vars.end()) out += it->second;
          i = e;
          continue;
        }
      }
      out += v[i];
    }
    return out;
  };
  for_each_line(text, [&](std::string_view line) {
    line = trim(line);
    if (line.empty() || line.front() == '#') return;
    size_t eq = line.find('='), colon = line.find(':');
    if (eq != std::string_view::npos && (colon == std::string_view::npos || eq < colon))
      vars[std::string(trim(line.substr(0, eq)))] = expand(trim(line.substr(eq + 1)));
    else if (colon != std::string_view::npos && trim(line.substr(0, colon)) == "Version")
      version = expand(trim(line.substr(colon + 1)));
  });
  return version;
}

std::map<std::string, long> parse_int_defines(std::string_view text, const std::vector<std::string>& names) {
  std::map<std::string, long> out;
  for_each_line(text, [&](std::string_view line) {
    line = trim(line);
    if (!line.starts_with('#')) return;
    line = trim(line.substr(1));
    if (!line.starts_with("define")) return;
    auto w = words(line.substr(6), " \t()");
    if (w.size() < 2) return;
    for (const auto& n : names) {
      if (w[0] != n || out.count(n)) continue;
      std::string_view v = w[1];
      while (!v.empty() && (v.back() == 'L' || v.back() == 'U' || v.back() == 'l' || v.back() == 'u'))
        v.remove_suffix(1);
      if (!starts_with_digit(v) || v.size() > 12) continue;
      long x = 0;
      bool ok = true;
      for (char ch : v) {
        if (!std::isdigit(static_cast<unsigned char>(ch))) ok = false;
        else x = x * 10 + (ch - '0');
      }
      if (ok) out[n] = x;
    }
  });
  return out;
}

namespace {
std::string dotted(const std::map<std::string, long>& d, const std::vector<std::string>& names, size_t required) {
  std::string out;
  for (size_t i = 0; i < names.size(); ++i) {
    auto it = d.find(names[i]);
    if (it == d.end()) {
      if (i < required) return {};
      break;
    }
    out += (i ? "." : "") + std::to_string(it->second);
  }
  return out;
}
}  // namespace

std::string fabric_h_version(std::string_view text) {
  std::vector<std::string> n = {"FI_MAJOR_VERSION", "FI_MINOR_VERSION", "FI_REVISION_VERSION"};
  return dotted(parse_int_defines(text, n), n, 2);
}

std::string mpi_h_version(std::string_view text) {
  std::vector<std::string> n = {"OMPI_MAJOR_VERSION", "OMPI_MINOR_VERSION", "OMPI_RELEASE_VERSION"};
  return dotted(parse_int_defines(text, n), n, 2);
}

std::string nccl_h_version(std::string_view text) {
  std::vector<std::string> n = {"NCCL_MAJOR", "NCCL_MINOR", "NCCL_PATCH"};
  return dotted(parse_int_defines(text, n), n, 3);
}

std::string parse_cuda_version_json(std::string_view text) {
  auto j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object() || !j.contains("cuda") || !j["cuda"].is_object()) return {};
  const auto& v = j["cuda"]["version"];
  return v.is_string() ? v.get<std::string>() : std::string();
}

std::vector<LdConfItem> parse_ld_so_conf(std::string_view text) {
  std::vector<LdConfItem> out;
  for_each_line(text, [&](std::string_view line) {
    if (auto h = line.find('#'); h != std::string_view::npos) line = line.substr(0, h);
    line = trim(line);
    if (line.empty() || line.starts_with("hwcap")) return;
    if (line.starts_with("include") && line.size() > 7 && std::isspace(static_cast<unsigned char>(line[7]))) {
      for (auto w : words(line.substr(8), " \t")) out.push_back({true, std::string(w)});
      return;
    }
    for (auto w : words(line, " \t:,")) out.push_back({false, std::string(w)});
  });
  return out;
}

std::vector<std::string> parse_environment_file(std::string_view text) {
  std::vector<std::string> out;
  for_each_line(text, [&](std::string_view line) {
    line = trim(line);
    if (line.empty() || line.front() == '#') return;
    if (line.starts_with("export ")) line = trim(line.substr(7));
    auto eq = line.find('=');
    if (eq == std::string_view::npos || eq == 0) return;
    std::string_view v = line.substr(eq + 1);
    if (v.size() >= 2 && (v.front() == '"' || v.front() == '\'') && v.back() == v.front())
      v = v.substr(1, v.size() - 2);
    out.push_back(std::string(line.substr(0, eq)) + "=" + std::string(v));
  });
  return out;
}

std::vector<std::string> split_colon(std::string_view s) {
  std::vector<std::string> out;
  for (auto w : words(s, ":")) out.emplace_back(w);
  return out;
}

}  // namespace trainimg::inspect::facts
