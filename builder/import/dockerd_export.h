// SPDX-License-Identifier: GPL-3.0-or-later
// `dockerd://IMAGE` for import: the daemon's flattened export of a created
// (never started) container, exactly what `enroot import dockerd://` reads
// (`docker create` + `docker export`), through the Engine API:
//   GET  /images/{name}/json           config, digests
//   POST /containers/create            {"Image": …, "Labels": {trainimg.import: TOKEN}}
//   GET  /containers/{id}/export       one tar: whiteouts applied by the daemon
//   POST /containers/prune?filters={"label":["trainimg.import=TOKEN"]}
// Why the export and not /images/{name}/get (inspect's dockerd source): it is
// one already-merged stream read once, with Docker's init layer in it as
// enroot sees it, and no layer is kept or read twice. The container is removed
// through a prune filtered on its own unique label: the Engine client speaks
// GET and POST only, and the filter can match nothing else.
#pragma once

#include <memory>
#include <string>

#include "inspect/source.h"

namespace trainimg::builder {

/// `image` is what follows "dockerd://". Reads the config now (throws Error
/// for an unknown image or an unreachable daemon). walk() offers one layer,
/// id "export"; each call creates, exports and removes its own container.
std::unique_ptr<inspect::ImageSource> open_dockerd_export(const std::string& image);

}  // namespace trainimg::builder
