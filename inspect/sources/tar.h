// SPDX-License-Identifier: GPL-3.0-or-later
// The layer-tar reader and the image-config parser: what the docker-archive,
// OCI, registry and dockerd sources share, public for image sources outside
// the library that read docker/OCI layers themselves (builder/import's
// `docker export` source). Implemented in inspect/sources/tar_layer.cc and
// inspect/sources/image_config.cc; the reader internals are in
// inspect/sources/tar_layer.h.
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "inspect/sources/source.h"

namespace trainimg::inspect {

/// Names the layer in messages and in Entry::layer.
struct LayerInput {
  std::string file;      ///< the input the user named: "img.tar", "oci-dir", "dockerd://x"
  std::string member;    ///< the blob inside it: "blobs/sha256/ab…", "<id>/layer.tar"
  std::string layer_id;  ///< Entry::layer: the diff_id "sha256:…" when known
  size_t index = 0;
};

/// Reads one layer tar (plain, gzip or zstd; libarchive detects which) in
/// `in` and calls v.begin_layer, v.entry (and v.content for wanted regular
/// files), v.end_layer. Hostile members are refused, each as one Error
/// naming the input, the layer and the member (with its tar offset):
/// absolute names, `..` that climbs above the root, hard links to a member
/// not seen earlier in the layer, members written through a symlink of the
/// same layer, truncated or corrupt streams (inspect/sources/tar_layer.h).
void walk_layer_tar(ContentReader& in, const LayerInput& where, LayerVisitor& v);

struct ParsedConfig {
  ImageConfig config;
  std::vector<std::string> diff_ids;  ///< rootfs.diff_ids, lowest layer first
};

/// Reads a docker/OCI image config's `config` (Env, Entrypoint, Cmd,
/// WorkingDir, User, Labels, Volumes), architecture, os and
/// rootfs.diff_ids. Throws Error naming `file`/`what` when a field has the
/// wrong JSON type.
ParsedConfig parse_image_config(const nlohmann::json& j, const std::string& file, const std::string& what);

}  // namespace trainimg::inspect
