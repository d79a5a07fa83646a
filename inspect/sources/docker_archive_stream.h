// SPDX-License-Identifier: GPL-3.0-or-later
// A docker archive read in ONE pass from a stream that cannot seek (dockerd's
// GET /images/{name}/get, or a compressed `docker save | gzip` file), with no
// temporary copy of the image.
//
// The difficulty: Docker 25+ writes the blobs first and manifest.json (the
// layer order) last, so layers arrive before anyone knows their order. So:
//  - members up to 4 MiB (configs, manifests, index.json, small layers) are
//    kept in memory (64 MiB in all at most) and dealt with at the end;
//  - a larger member is walked as a layer tar as it arrives: its entries'
//    metadata are recorded in memory, and the bytes of the regular files the
//    visitor may_want() are copied to one unlinked temporary file (only
//    those files, never the image);
//  - every member named by a digest is hashed as it passes and checked;
//  - at the end manifest.json picks the image, its config is verified and
//    parsed, and the layers are replayed to the visitor in manifest order.
#pragma once

#include <string>

#include "inspect/sources/source.h"
#include "inspect/sources/tar_layer.h"

namespace trainimg::inspect {

/// Reads the whole archive from `in`. `file` names the input in messages;
/// `ref` selects an image when the archive has several (see
/// select_archive_image). With `v`, walks the image's layers in order through
/// it. Returns the description (reference and kind are left to the caller).
/// Throws trainimg::Error on corrupt, truncated or hostile input.
ImageDescription read_docker_archive_stream(ContentReader& in, const std::string& file,
                                            const std::string& ref, LayerVisitor* v);

}  // namespace trainimg::inspect
