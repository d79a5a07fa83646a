// SPDX-License-Identifier: GPL-3.0-or-later
// Where the dynamic loader would find a library inside the image, without
// running it: DT_RPATH (when there is no DT_RUNPATH), LD_LIBRARY_PATH,
// DT_RUNPATH of the requesting object, the ld.so.conf directories in conf
// order (what ldconfig builds ld.so.cache from), then the default
// directories (glibc ld.so(8), "Search order").
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "inspect/facts/facts.h"
#include "inspect/tree.h"

namespace trainimg::inspect::facts {

/// The object asking for the library: its run paths apply ($ORIGIN = its directory).
struct Requester {
  std::string path;
  std::vector<std::string> runpath, rpath;
};

/// Directories of /etc/ld.so.conf and the files it includes (globs expanded
/// in sorted order, nested includes followed), each with the file naming it.
/// Needs the conf files captured in `tree`.
std::vector<SearchDir> ld_so_conf_dirs(const MergedTree& tree);

/// The trusted directories searched last on x86-64 Debian/Ubuntu.
const std::vector<std::string>& default_dirs();

/// Every directory in search order that holds `name` (a regular file after
/// symlinks); the first is the one loaded. A `name` with '/' is opened as is.
LoaderOrder resolve_library(const MergedTree& tree, const std::string& name,
                            const std::vector<std::string>& ld_library_path, const std::vector<SearchDir>& conf,
                            const Requester* req = nullptr);

/// The LD_PRELOAD objects (`value`: entries separated by spaces or colons)
/// whose file name starts with `prefix`, as candidates that come before any
/// search: ld.so(8) loads them first. An entry without '/' is searched like
/// a DT_NEEDED name; one that is not in the image is left out.
std::vector<LoaderCandidate> preloaded(const MergedTree& tree, std::string_view value,
                                       std::string_view prefix,
                                       const std::vector<std::string>& ld_library_path,
                                       const std::vector<SearchDir>& conf);

/// The names NCCL dlopens for NCCL_NET_PLUGIN, in its order
/// (NVIDIA/nccl v2.30.7-1 src/plugin/plugin_open.cc openPluginLib): unset
/// -> "libnccl-net.so"; "none" -> nothing; else for each comma-separated
/// VALUE the value itself, then "libnccl-net-VALUE.so" unless VALUE has a
/// '/' or already looks like "lib….so".
std::vector<std::string> nccl_net_plugin_names(const std::optional<std::string>& value);

}  // namespace trainimg::inspect::facts
