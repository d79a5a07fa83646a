// SPDX-License-Identifier: GPL-3.0-or-later
// The docker/OCI image config JSON (shared by the docker-archive, OCI and
// dockerd sources) and docker's manifest.json.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "inspect/sources/tar.h"  // ParsedConfig, parse_image_config

namespace trainimg::inspect {

/// Parses JSON text; throws Error(file, "<what>: invalid JSON at byte N: …").
nlohmann::json parse_json(std::string_view text, const std::string& file, const std::string& what);

/// The string at `ptr` (e.g. "/platform/os") in `j`: "" when nothing is
/// there (or null); Error(file, "<what>: '<ptr>' must be a string") for
/// another type. nlohmann's value() throws its own type_error instead.
std::string json_string_at(const nlohmann::json& j, const nlohmann::json::json_pointer& ptr,
                           const std::string& file, const std::string& what);

/// OCI and Docker layer media types (tar, tar+gzip, tar+zstd, foreign and
/// non-distributable variants): the layers the tar reader takes.
bool is_layer_media_type(const std::string& media_type);

/// OCI image index / Docker manifest list media types.
bool is_index_media_type(const std::string& media_type);

/// An OCI content descriptor (the config, a layer, a manifest of an index).
struct Descriptor {
  std::string media_type, digest;
  uint64_t size = 0;
};

/// Reads a descriptor: a string 'digest' of the form sha256:<64 hex>, a
/// non-negative 'size' and an optional 'mediaType'. Throws Error(file,
/// "<where>: …") for anything else.
Descriptor parse_descriptor(const nlohmann::json& j, const std::string& file, const std::string& where);

/// One image of a docker archive's manifest.json.
struct ArchiveImage {
  std::string config;               ///< member name of the config JSON
  std::vector<std::string> layers;  ///< member names, lowest first
  std::vector<std::string> repo_tags;
};

/// Picks the image of manifest.json that `ref` names (a RepoTags entry, with
/// ":latest" implied); with an empty ref the archive must hold exactly one
/// image. Throws Error listing the tags that exist otherwise.
ArchiveImage select_archive_image(const nlohmann::json& manifest, const std::string& ref,
                                  const std::string& file);

/// For blob-named members ("blobs/sha256/<hex>", "<hex>.json",
/// "<hex>/layer.tar" is NOT one) the digest the name claims, else "".
std::string digest_from_member_name(const std::string& member);

}  // namespace trainimg::inspect
