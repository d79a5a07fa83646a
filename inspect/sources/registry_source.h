// SPDX-License-Identifier: GPL-3.0-or-later
// ImageSource over an image in a registry (`docker://REFERENCE`, see
// inspect/registry/reference.h), without a Docker daemon: the manifest
// (through a manifest list / OCI index by platform), the config and every
// layer fetched by inspect/registry/client.h into the blob cache
// (registry::BlobCache, inspect/inspect.h). Each blob is hashed while it streams and
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

#include "inspect/sources/source.h"  // SourceOptions

namespace trainimg::inspect {

/// `ref` is what follows "docker://". Resolves the manifest and reads the
/// config now; throws trainimg::Error naming the registry, the repository,
/// and the HTTP status or the digest.
std::unique_ptr<ImageSource> open_registry_source(const std::string& ref, const SourceOptions& opt = {});

/// "linux/amd64" on x86-64 (the host's os/arch[/variant] as OCI names it).
std::string host_platform();

}  // namespace trainimg::inspect
