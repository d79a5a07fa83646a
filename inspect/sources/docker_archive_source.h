// SPDX-License-Identifier: GPL-3.0-or-later
// ImageSource over what `docker save` writes (domain.md §5): manifest.json
// (Config, RepoTags, Layers), the config JSON, and the layer tars, in the
// old `<id>/layer.tar` layout or Docker 25+'s OCI layout inside the archive
// (`blobs/sha256/<hex>`). Layers may be plain, gzip or zstd.
//
// A plain archive file is indexed once (member headers only, every data
// region seeked over), then each layer is read in place as a byte range of
// the file: an uncompressed layer's unwanted file data is seeked over, never
// read. A compressed or non-seekable archive is read in one streaming pass
// (docker_archive_stream.h), as dockerd's /images/{name}/get is.
//
// Verified: the config's sha256 against its member name; a layer's sha256
// against its blob name (or, for an uncompressed legacy layer, against the
// config's diff_id) whenever every byte of it was read — a layer whose data
// was seeked over is not hashed (that is the point of seeking).
#pragma once

#include <memory>
#include <string>

#include "inspect/sources/source.h"

namespace trainimg::inspect {

/// `spec` is "PATH" or "PATH:REF" (REF one of the archive's RepoTags; needed
/// when the archive holds several images). Reads manifest.json and the config
/// now; throws trainimg::Error naming PATH for a missing, truncated or
/// malformed archive, a missing member or a config digest mismatch.
std::unique_ptr<ImageSource> open_docker_archive_source(const std::string& spec);

}  // namespace trainimg::inspect
