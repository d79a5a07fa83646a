// SPDX-License-Identifier: GPL-3.0-or-later
// EFA probes: the installer manifest, /sys/class/infiniband, fi_info.
#include <algorithm>
#include <cctype>
#include <set>

#include "common/version.h"
#include "inspect/host/parsers.h"

namespace trainimg::host {

namespace {

bool starts_with(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

// Splits one package token into name and version. Debian file names are
// name_version_arch(.deb); RPM ones name-version-release.arch(.rpm): the
// version starts at the first '-' followed by a digit.
std::pair<std::string, std::string> split_package(std::string_view tok) {
  for (std::string_view ext : {".deb", ".rpm"})
    if (tok.size() > ext.size() && tok.substr(tok.size() - ext.size()) == ext) tok.remove_suffix(ext.size());
  // RPM arch tails hold '_' ("x86_64"): drop them before looking for Debian's '_'.
  for (std::string_view arch : {".x86_64", ".aarch64", ".noarch"})
    if (tok.size() > arch.size() && tok.substr(tok.size() - arch.size()) == arch) tok.remove_suffix(arch.size());
  size_t us = tok.find('_');
  if (us != std::string_view::npos) {
    std::string_view name = tok.substr(0, us);
    std::string_view rest = tok.substr(us + 1);
    size_t us2 = rest.find('_');
    return {std::string(name), std::string(rest.substr(0, us2))};
  }
  for (size_t i = 0; i + 1 < tok.size(); ++i)
    if (tok[i] == '-' && std::isdigit(static_cast<unsigned char>(tok[i + 1]))) {
      return {std::string(tok.substr(0, i)), std::string(tok.substr(i + 1))};
    }
  return {std::string(tok), ""};
}

// Before rdma-core's predictable names (rdmapXsY) the EFA driver named its
// devices efa_0, efa_1, … (libfabric issue #5689: "domain: efa_0-rdm").
bool is_old_efa_name(std::string_view name) {
  return starts_with(name, "efa_") && name.size() > 4 &&
         name.find_first_not_of("0123456789", 4) == std::string_view::npos;
}

}  // namespace

EfaManifest parse_efa_manifest(std::string_view text) {
  EfaManifest m;
  for (auto line : split_lines(text)) {
    auto t = trim(line);
    if (t.empty()) continue;
    if (t.front() == '#') {
      constexpr std::string_view kKey = "EFA installer version:";
      size_t at = t.find(kKey);
      if (at != std::string_view::npos) {
        auto v = trim(t.substr(at + kKey.size()));
        if (!v.empty()) m.installer_version = std::string(v);
      }
      continue;
    }
    size_t pos = 0;
    while (pos < t.size()) {
      size_t sp = t.find_first_of(" \t", pos);
      std::string_view tok = t.substr(pos, sp == std::string_view::npos ? std::string_view::npos : sp - pos);
      if (!tok.empty()) {
        auto [name, ver] = split_package(tok);
        if (!ver.empty()) m.packages[name] = ver;
      }
      if (sp == std::string_view::npos) break;
      pos = sp + 1;
    }
  }
  // Package names of the installer (public: aws-efa-installer's DEBS/RPMS).
  for (const auto& [name, ver] : m.packages) {
    std::string rel = release_of(ver);
    if (name == "libfabric1-aws" || name == "libfabric-aws") m.libfabric = rel;
    else if (!m.libfabric && starts_with(name, "libfabric") && name.find("aws") != std::string::npos) m.libfabric = rel;
    if (starts_with(name, "libnccl-ofi") || name == "aws-ofi-nccl") m.ofi_nccl = rel;
    if (starts_with(name, "openmpi40-aws") || starts_with(name, "openmpi4")) m.openmpi4 = rel;
    if (starts_with(name, "openmpi50-aws") || starts_with(name, "openmpi5")) m.openmpi5 = rel;
    if (starts_with(name, "pmix")) m.pmix = rel;
  }
  return m;
}

InfinibandDevices parse_infiniband(std::string_view text) {
  InfinibandDevices d;
  if (auto only = first_line(text); only && split_lines(trim(text)).size() == 1) {
    if (auto n = to_int(*only); n && *n >= 0 && *n <= 4096) {
      d.counted = static_cast<int>(*n);
      return d;
    }
  }
  auto add = [&d](std::string_view name) {
    d.all.emplace_back(name);
    if (starts_with(name, "rdmap") || is_old_efa_name(name))
      d.efa.emplace_back(name);
    else if (starts_with(name, "mlx5_") || starts_with(name, "ibp"))
      d.connectx.emplace_back(name);
    else
      d.other.emplace_back(name);
  };
  for (auto line : split_lines(text)) {
    auto t = trim(line);
    if (t.empty() || t.starts_with("total ")) continue;
    if (size_t arrow = t.find(" -> "); arrow != std::string_view::npos) {  // ls -l: "… NAME -> TARGET"
      auto head = trim(t.substr(0, arrow));
      size_t sp = head.find_last_of(" \t");
      add(sp == std::string_view::npos ? head : head.substr(sp + 1));
      continue;
    }
    size_t pos = 0;
    while (pos < t.size()) {
      size_t end = t.find_first_of(" \t", pos);
      std::string_view name =
          t.substr(pos, end == std::string_view::npos ? std::string_view::npos : end - pos);
      if (!name.empty()) add(name);
      if (end == std::string_view::npos) break;
      pos = end + 1;
    }
  }
  return d;
}

std::vector<std::string> parse_fi_info_domains(std::string_view text) {
  std::set<std::string> domains;
  bool in_domain_attr = false;  // fi_info -v: inside "fi_domain_attr:"
  for (auto line : split_lines(text)) {
    auto t = trim(line);
    if (t.starts_with("fi_") && t.ends_with(":")) in_domain_attr = t == "fi_domain_attr:";
    std::string_view v;
    if (t.starts_with("domain:"))
      v = trim(t.substr(7));
    else if (in_domain_attr && t.starts_with("name:"))
      v = trim(t.substr(5));
    else
      continue;
    if (v.starts_with("0x") || v == "(nil)") continue;  // fi_info -v: the domain pointer
    // libfabric 2.x lists one device under the efa fabric ("rdmap79s0-rdm")
    // and again under efa-direct ("rdmap79s0"): count devices, not spellings.
    for (std::string_view suffix : {"-rdm", "-dgrm"})
      if (v.size() > suffix.size() && v.substr(v.size() - suffix.size()) == suffix) v.remove_suffix(suffix.size());
    if (!v.empty()) domains.emplace(v);
  }
  return {domains.begin(), domains.end()};
}

}  // namespace trainimg::host
