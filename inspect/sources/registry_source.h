// SPDX-License-Identifier: GPL-3.0-or-later
// ImageSource over an image in a registry (`docker://REFERENCE`, see
// inspect/registry/reference.h), without a Docker daemon: the manifest
// (through a manifest list / OCI index by platform), the config and every
// layer fetched by inspect/registry/client.h into the blob cache
// (inspect/registry/blob_cache.h). Each blob is hashed while it streams and
// checked against its digest and size before it is published; a mismatch
// discards it. Layers download in parallel (SourceOptions::max_connections)
// while walk() reads them in order, each as soon as it is complete, through
// the same tar reader as the docker-archive and OCI sources.
//
// A reference pinned by digest whose manifest and blobs are all cached is
// read without contacting the registry.
#pragma once

#include <memory>
#include <string>

#include "inspect/source.h"

namespace trainimg::inspect {

/// How registry sources fetch; set once by the command line (cmd/), read by
/// open_registry_source(). The environment fills the defaults.
struct SourceOptions {
  std::string cache_dir;  ///< blob cache (default: registry::default_cache_dir())
  bool no_cache = false;  ///< write nothing to any cache (blobs in unnamed temporary files)
  std::string platform;   ///< os/arch[/variant] from an index; empty: TRAINIMG_PLATFORM, else the host's
  unsigned max_connections = 0;  ///< blobs in flight; 0: ENROOT_MAX_CONNECTIONS, else 10
};
void set_source_options(const SourceOptions& o);
/// The options in force, with the environment's defaults filled in.
SourceOptions source_options();

/// `ref` is what follows "docker://". Resolves the manifest and reads the
/// config now; throws trainimg::Error naming the registry, the repository,
/// and the HTTP status or the digest.
std::unique_ptr<ImageSource> open_registry_source(const std::string& ref);

/// The digest of the image manifest `ref` names for the platform in force
/// (through a manifest list / OCI index), fetching manifests only: no
/// config, no layer. Pinned and cached manifests are read offline. Throws
/// as open_registry_source().
std::string resolve_registry_digest(const std::string& ref);

/// "linux/amd64" on x86-64 (the host's os/arch[/variant] as OCI names it).
std::string host_platform();

}  // namespace trainimg::inspect
