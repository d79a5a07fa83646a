// SPDX-License-Identifier: GPL-3.0-or-later
// What trainimg inspect knows about an image after one pass: plain data,
// every item with the path it was read from, the layer that wrote it and
// where its version came from. Rules read only this (and the host's
// expectations); the report renders it.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "inspect/facts/text_parsers.h"

namespace trainimg::inspect::facts {

/// One component found in the image: a library file or an install prefix.
struct Found {
  std::string path;          ///< the file (libraries) or prefix (MPI, CUDA)
  std::string layer;         ///< layer that wrote it ("squashfs", "dir", "sha256:…")
  std::string version;       ///< empty when nothing said
  std::string version_from;  ///< e.g. "/opt/amazon/efa/lib/pkgconfig/libfabric.pc", "EFA installer manifest"
};

struct EfaInstaller {
  std::string path = "/opt/amazon/efa_installed_packages";
  std::string layer;
  std::string version;
  std::vector<Package> packages;
  /// The manifest's version of the first package whose name matches `pred`.
  std::optional<Package> package(bool (*pred)(std::string_view)) const;
};

struct Libfabric : Found {
  bool efa_build = false;  ///< under /opt/amazon/efa (the installer's or NGC's EFA build)
};

struct OfiPlugin : Found {
  bool aws_ofi_nccl = false;     ///< carries aws-ofi-nccl's init string or lives in an ofi-nccl prefix
  std::vector<int> net_apis;     ///< N of every exported ncclNetPlugin_vN, ascending
  std::vector<std::string> exports;  ///< every exported nccl*Plugin_v* symbol
};

struct Cuda : Found {
  std::vector<std::string> compat_libs;  ///< .../compat/libcuda.so.* present
};

struct MpiInstall : Found {
  std::string origin;  ///< "efa-installer", "ngc", "distribution" or "other"
};

/// One directory the loader would look in, and why.
struct SearchDir {
  std::string dir;
  std::string how;  ///< "LD_LIBRARY_PATH", "DT_RUNPATH of X", "DT_RPATH of X", "/etc/ld.so.conf.d/efa.conf", "default"
};

struct LoaderCandidate {
  std::string path;      ///< DIR/NAME as the loader opens it
  std::string resolved;  ///< after symlinks, inside the image
  std::string layer;     ///< of the resolved file
  std::string how;
};

/// Where the loader would find one library, in search order; the first
/// candidate is the one it loads.
struct LoaderOrder {
  std::string library;
  std::string requester;  ///< object whose run paths apply (empty: none)
  std::vector<LoaderCandidate> candidates;
  const LoaderCandidate* selected() const { return candidates.empty() ? nullptr : &candidates.front(); }
};

/// One way the environment picks an MPI, and the prefix it resolves to.
struct MpiVote {
  std::string by;      ///< "PATH", "OPAL_PREFIX", "loader", "ELF run path"
  std::string detail;  ///< e.g. "/usr/local/mpi/bin/mpirun", "/opt/app/bin/solver needs libmpi.so.40"
  std::string prefix;
};

struct Removed {
  std::string path, layer, removed_by;
};

struct ElfNote {
  std::string path, layer, error;
};

struct ImageFacts {
  std::string reference;  ///< what the user typed
  std::string kind;       ///< source kind
  std::string digest;     ///< the resolved manifest digest when the source has one (registry, OCI)
  std::vector<std::string> layers;
  std::vector<std::string> env;  ///< KEY=VALUE, image order
  std::string env_from;          ///< "image config", "/etc/environment" or "none"

  std::optional<EfaInstaller> installer;
  std::map<std::string, std::string> dpkg;  ///< relevant installed packages
  std::vector<Libfabric> libfabrics;
  std::vector<OfiPlugin> plugins;
  std::vector<Found> nccls;
  std::vector<Cuda> cudas;
  std::vector<MpiInstall> mpis;
  std::vector<SearchDir> ld_so_conf;  ///< directories in conf order
  std::vector<LoaderOrder> loader;    ///< libfabric.so.1, libnccl-net-ofi.so, libmpi.so.40
  /// What NCCL would dlopen for the final NCCL_NET_PLUGIN (names tried in
  /// NCCL's order; the first one found).
  std::vector<std::string> nccl_plugin_names;
  std::optional<LoaderCandidate> nccl_plugin;
  std::vector<MpiVote> mpi_votes;
  std::vector<Removed> removed;  ///< EFA libraries deleted by a later layer
  std::vector<ElfNote> elf_notes;
  std::string truncated;  ///< MergedTree::truncated: the walk stopped early

  /// Final value of an environment variable (last assignment wins).
  std::optional<std::string> env_value(const std::string& name) const;
  const LoaderOrder* loader_for(const std::string& library) const;
  const OfiPlugin* plugin_at(const std::string& path) const;
  const Libfabric* libfabric_at(const std::string& path) const;
  /// The NCCL the image's programs load: libnccl.so.2 by loader order, else
  /// the newest found.
  const Found* nccl() const;
};

/// Package-name predicates for the EFA stack (deb and rpm names).
bool is_libfabric_package(std::string_view name);
bool is_ofi_nccl_package(std::string_view name);

}  // namespace trainimg::inspect::facts
