// SPDX-License-Identifier: GPL-3.0-or-later
// `trainimg import --via enroot`: the real `enroot import` makes the image
// (for teams that must keep enroot's own output), into a temporary name in
// the target directory; trainimg then verifies it, publishes it atomically
// and writes the sidecar, as for its own images. enroot must be installed;
// nothing imitates it.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "builder/import/import.h"

namespace trainimg::builder {

/// Runs `enroot import -o TMP SOURCE` (SOURCE one of enroot's docker://,
/// dockerd://, podman://) and publishes TMP as opt.output. Throws Error when
/// enroot is not on PATH, when it fails (its exit status), or when its
/// output does not read back; the temporary file is removed in every case.
ImportResult import_via_enroot(const ImportOptions& opt, const ImportProgressFn& progress);

/// The sidecar's "inspect" object for a published image (import.cc); the
/// full report is kept in `kept` when the image could be inspected. The
/// facts name `digest` (the source's manifest digest, when known) as the
/// image's: the .sqsh itself has none, and the job-start gate matches
/// the facts to the image by it. With `fd`, the image open there is read
/// (written, not yet published under `image`).
nlohmann::ordered_json inspect_verdict(const std::string& image, std::optional<Report>& kept,
                                       const std::string& digest = {}, int fd = -1);

/// The full path of `name` on $PATH, or "" when absent.
std::string find_on_path(const std::string& name);

}  // namespace trainimg::builder
