// SPDX-License-Identifier: GPL-3.0-or-later
#include <algorithm>

#include "inspect/rules/rule.h"

namespace trainimg::inspect::rules {

namespace {
std::string strip_slash(std::string s) {
  while (s.size() > 1 && s.back() == '/') s.pop_back();
  return s;
}

std::string dir_of(const std::string& p) {
  return p.substr(0, p.rfind('/'));
}

// Where the installer's own libraries are: seed 002's /opt/amazon/ofi-nccl/lib
// and /opt/amazon/efa/lib on an NGC base; the installer's libnccl-ofi deb on
// other bases puts the plugin in /opt/amazon/ofi-nccl/lib/x86_64-linux-gnu
// (aws/deep-learning-containers puts that directory in LD_LIBRARY_PATH).
std::vector<std::string> installer_dirs(const facts::ImageFacts& f) {
  std::vector<std::string> dirs;
  auto add = [&](const std::string& d) {
    if (std::find(dirs.begin(), dirs.end(), d) == dirs.end()) dirs.push_back(d);
  };
  for (const auto& p : f.plugins)
    if (p.aws_ofi_nccl && p.path.starts_with("/opt/amazon/ofi-nccl/")) add(dir_of(p.path));
  // Only an installer that recorded a plugin package (-g on a GPU image,
  // installer >= 1.39 off NGC) owes a plugin directory.
  if (dirs.empty() && f.installer->package(facts::is_ofi_nccl_package)) add("/opt/amazon/ofi-nccl/lib");
  const size_t before = dirs.size();
  for (const auto& l : f.libfabrics)
    if (l.efa_build) add(dir_of(l.path));
  if (dirs.size() == before) add("/opt/amazon/efa/lib");
  return dirs;
}

// A directory where the loader would find another libfabric.so.1 or NCCL
// net plugin (under a name NCCL opens): what seed 002's order is there to
// keep behind the installer's ("avoiding mix-ups with the older-version
// libraries"). Other files there (an InfiniBand libnccl-net.so while
// NCCL_NET_PLUGIN=ofi) are never opened.
std::optional<std::string> other_copy_in(const facts::ImageFacts& f, const std::string& dir) {
  auto other = [&](const facts::LoaderCandidate& c) {
    return dir_of(c.path) == dir && !c.resolved.starts_with("/opt/amazon/efa/") &&
           !c.resolved.starts_with("/opt/amazon/ofi-nccl/");
  };
  for (const char* lib : {"libfabric.so.1", "libnccl-net-ofi.so"})
    if (const auto* order = f.loader_for(lib))
      for (const auto& c : order->candidates)
        if (other(c)) return c.path;
  if (f.nccl_plugin && other(*f.nccl_plugin)) return f.nccl_plugin->path;
  return std::nullopt;
}

void check(const RuleInfo& rule, const Context& c, std::vector<Diagnostic>& out) {
  const auto& f = c.facts;
  if (!f.installer) return;
  const auto want = installer_dirs(f);
  auto v = f.env_value("LD_LIBRARY_PATH");
  std::vector<std::string> dirs;
  for (const auto& d : facts::split_colon(v.value_or(""))) dirs.push_back(strip_slash(d));
  size_t last = 0;
  bool all_in = true;
  for (const auto& w : want) {
    auto it = std::find(dirs.begin(), dirs.end(), w);
    all_in = all_in && it != dirs.end();
    if (it != dirs.end()) last = std::max(last, static_cast<size_t>(it - dirs.begin()));
  }
  // Directories ahead of the installer's that hold no other libfabric or
  // plugin change nothing (DLC and awsome-distributed-training images put
  // /usr/local/lib or the CUDA dirs first).
  std::optional<std::string> ahead;
  for (size_t i = 0; all_in && i < last && !ahead; ++i)
    if (std::find(want.begin(), want.end(), dirs[i]) == want.end()) ahead = other_copy_in(f, dirs[i]);
  if (all_in && !ahead) return;
  std::string front;
  for (const auto& w : want) front += (front.empty() ? "" : ":") + w;
  out.push_back(Finding(rule, "LD_LIBRARY_PATH " + (v ? "is '" + *v + "'" : std::string("is not set")) +
                                  " in the final environment (" + f.env_from + "); it must start with " +
                                  front + " while the EFA installer is present" +
                                  (ahead ? " (" + *ahead + " comes first)" : std::string()))
                    .in(c.facts.reference));
}
}  // namespace

const ImageRule kLdLibraryPathOrder{
    {"ld-library-path-order", Severity::Error,
     "the installer's /opt/amazon/ofi-nccl/lib and /opt/amazon/efa/lib (or wherever its plugin and "
     "libfabric are) are missing from LD_LIBRARY_PATH, or come after a directory holding another libfabric "
     "or NCCL net plugin, while the installer is present",
     "ENV LD_LIBRARY_PATH=/opt/amazon/ofi-nccl/lib:/opt/amazon/efa/lib:${LD_LIBRARY_PATH}",
     "seed 002 \"Pitfall ③ — LD_LIBRARY_PATH\"", "image", "docs/inspect.md#rules"},
    check};

}  // namespace trainimg::inspect::rules
