// SPDX-License-Identifier: GPL-3.0-or-later
// ImageSource over an image in the local Docker daemon (`dockerd://IMAGE[:TAG]`),
// through inspect/engine (libcurl on the daemon's unix socket, DOCKER_HOST
// honoured). describe() comes from GET /images/{name}/json; walk() streams
// GET /images/{name}/get — a docker archive — through the one-pass reader
// of docker_archive_stream.h: no `docker` CLI, no temporary copy of the
// image (only the bytes of the files the visitor wants are kept, in an
// unlinked temporary file, because the layer order is only known when
// manifest.json arrives, which may be last).
#pragma once

#include <memory>
#include <string>

#include "inspect/sources/source.h"

namespace trainimg::inspect {

/// `name` is "IMAGE[:TAG]" or an image id. Connects and inspects the image
/// now; throws trainimg::Error (the daemon's message, e.g. "No such image")
/// when the daemon is unreachable or the image is missing.
std::unique_ptr<ImageSource> open_dockerd_source(const std::string& name);

}  // namespace trainimg::inspect
