// SPDX-License-Identifier: GPL-3.0-or-later
#include "inspect/facts/facts.h"

#include "common/version.h"

namespace trainimg::inspect::facts {

std::optional<Package> EfaInstaller::package(bool (*pred)(std::string_view)) const {
  for (const auto& p : packages)
    if (pred(p.name)) return p;
  return std::nullopt;
}

std::optional<std::string> ImageFacts::env_value(const std::string& name) const {
  std::optional<std::string> v;
  for (const auto& kv : env)
    if (kv.size() > name.size() && kv.compare(0, name.size(), name) == 0 && kv[name.size()] == '=')
      v = kv.substr(name.size() + 1);
  return v;
}

const LoaderOrder* ImageFacts::loader_for(const std::string& library) const {
  for (const auto& l : loader)
    if (l.library == library) return &l;
  return nullptr;
}

const OfiPlugin* ImageFacts::plugin_at(const std::string& path) const {
  for (const auto& p : plugins)
    if (p.path == path) return &p;
  return nullptr;
}

const Libfabric* ImageFacts::libfabric_at(const std::string& path) const {
  for (const auto& l : libfabrics)
    if (l.path == path) return &l;
  return nullptr;
}

const Found* ImageFacts::nccl() const {
  if (const auto* l = loader_for("libnccl.so.2"); l && l->selected())
    for (const auto& n : nccls)
      if (n.path == l->selected()->resolved) return &n;
  const Found* best = nullptr;
  for (const auto& n : nccls)
    if (!n.version.empty() && (!best || compare_versions(n.version, best->version) > 0)) best = &n;
  return best;
}

// Debian: libfabric1-aws (+ -dev, -bin); RPM: libfabric-aws; upstream: libfabric1.
bool is_libfabric_package(std::string_view n) {
  return n == "libfabric1-aws" || n == "libfabric-aws" || n == "libfabric1" || n == "libfabric";
}

// The plugin ships as libnccl-ofi (deb), libnccl-ofi-ngc-vN on NGC bases
// (domain.md §3), aws-ofi-nccl or libnccl-net-ofi elsewhere.
bool is_ofi_nccl_package(std::string_view n) {
  return (n.starts_with("libnccl-ofi") || n.starts_with("aws-ofi-nccl") || n.starts_with("libnccl-net-ofi")) &&
         !n.ends_with("-dbg") && !n.ends_with("-dbgsym");
}

}  // namespace trainimg::inspect::facts
