// SPDX-License-Identifier: GPL-3.0-or-later
#include "inspect/sources/image_config.h"

#include <set>

#include "common/error.h"
#include "common/json_text.h"
#include "common/sha256.h"

namespace trainimg::inspect {
namespace {

using nlohmann::json;

std::vector<std::string> strings(const json& j, const char* key, const std::string& file,
                                 const std::string& what) {
  std::vector<std::string> out;
  if (!j.contains(key) || j[key].is_null()) return out;
  if (!j[key].is_array()) throw Error(file, what + ": '" + key + "' must be a list of strings");
  for (const auto& v : j[key]) {
    if (!v.is_string()) throw Error(file, what + ": '" + key + "' must be a list of strings");
    out.push_back(v.get<std::string>());
  }
  return out;
}

std::string string_of(const json& j, const char* key, const std::string& file, const std::string& what) {
  if (!j.contains(key) || j[key].is_null()) return {};
  if (!j[key].is_string()) throw Error(file, what + ": '" + key + "' must be a string");
  return j[key].get<std::string>();
}

}  // namespace

json parse_json(std::string_view text, const std::string& file, const std::string& what) {
  return parse_json_part(text, file, what);
}

std::string json_string_at(const json& j, const json::json_pointer& ptr, const std::string& file,
                           const std::string& what) {
  if (!j.contains(ptr)) return {};
  const json& v = j.at(ptr);
  if (v.is_null()) return {};
  if (!v.is_string()) throw Error(file, what + ": '" + ptr.to_string() + "' must be a string");
  return v.get<std::string>();
}

ParsedConfig parse_image_config(const json& j, const std::string& file, const std::string& what) {
  if (!j.is_object()) throw Error(file, what + ": the image config is not a JSON object");
  ParsedConfig out;
  ImageConfig& c = out.config;
  c.architecture = string_of(j, "architecture", file, what);
  c.os = string_of(j, "os", file, what);
  if (j.contains("config") && j["config"].is_object()) {
    const json& k = j["config"];
    c.env = strings(k, "Env", file, what);
    c.entrypoint = strings(k, "Entrypoint", file, what);
    c.cmd = strings(k, "Cmd", file, what);
    c.workdir = string_of(k, "WorkingDir", file, what);
    c.user = string_of(k, "User", file, what);
    if (k.contains("Labels") && k["Labels"].is_object())
      for (const auto& [key, v] : k["Labels"].items())
        if (v.is_string()) c.labels[key] = v.get<std::string>();
    if (k.contains("Volumes") && k["Volumes"].is_object())
      for (const auto& [key, v] : k["Volumes"].items()) c.volumes.push_back(key);
  }
  if (j.contains("rootfs") && j["rootfs"].is_object())
    out.diff_ids = strings(j["rootfs"], "diff_ids", file, what);
  return out;
}

ArchiveImage select_archive_image(const json& manifest, const std::string& ref, const std::string& file) {
  const std::string what = "manifest.json";
  if (!manifest.is_array() || manifest.empty())
    throw Error(file, what + ": expected a non-empty list of images");
  std::string want = ref;
  if (!want.empty() &&
      want.find(':', want.rfind('/') == std::string::npos ? 0 : want.rfind('/')) == std::string::npos)
    want += ":latest";
  std::vector<ArchiveImage> all;
  std::string tags;
  for (const auto& m : manifest) {
    if (!m.is_object()) throw Error(file, what + ": each image must be a JSON object");
    ArchiveImage img;
    img.config = string_of(m, "Config", file, what);
    img.layers = strings(m, "Layers", file, what);
    img.repo_tags = strings(m, "RepoTags", file, what);
    if (img.config.empty()) throw Error(file, what + ": an image has no 'Config'");
    for (const auto& t : img.repo_tags) tags += (tags.empty() ? "" : ", ") + t;
    if (!want.empty())
      for (const auto& t : img.repo_tags)
        if (t == want || t == ref || t == "docker.io/library/" + want) return img;
    all.push_back(std::move(img));
  }
  if (want.empty() && all.size() == 1) return all[0];
  if (want.empty())
    throw Error(file, "the archive holds " + std::to_string(all.size()) +
                          " images; name one: docker-archive:" + file +
                          ":TAG (tags: " + (tags.empty() ? "none" : tags) + ")");
  throw Error(file,
              "no image tagged '" + ref + "' in the archive (tags: " + (tags.empty() ? "none" : tags) + ")");
}

std::string digest_from_member_name(const std::string& member) {
  std::string hex;
  if (member.starts_with("blobs/sha256/")) {
    hex = member.substr(13);
  } else if (member.ends_with(".json") && member.find('/') == std::string::npos) {
    hex = member.substr(0, member.size() - 5);
  }
  std::string d = "sha256:" + hex;
  return is_sha256_digest(d) ? d : "";
}

bool is_layer_media_type(const std::string& t) {
  static const std::set<std::string> kLayerTypes = {
      "application/vnd.oci.image.layer.v1.tar",
      "application/vnd.oci.image.layer.v1.tar+gzip",
      "application/vnd.oci.image.layer.v1.tar+zstd",
      "application/vnd.oci.image.layer.nondistributable.v1.tar",
      "application/vnd.oci.image.layer.nondistributable.v1.tar+gzip",
      "application/vnd.oci.image.layer.nondistributable.v1.tar+zstd",
      "application/vnd.docker.image.rootfs.diff.tar",
      "application/vnd.docker.image.rootfs.diff.tar.gzip",
      "application/vnd.docker.image.rootfs.diff.tar.zstd",
      "application/vnd.docker.image.rootfs.foreign.diff.tar.gzip",
  };
  return kLayerTypes.count(t) != 0;
}

Descriptor parse_descriptor(const json& j, const std::string& file, const std::string& where) {
  if (!j.is_object() || !j.contains("digest") || !j["digest"].is_string() || !j.contains("size") ||
      !j["size"].is_number_unsigned())
    throw Error(file, where + ": a descriptor needs a string 'digest' and a non-negative 'size'");
  Descriptor d;
  d.digest = j["digest"].get<std::string>();
  d.size = j["size"].get<uint64_t>();
  if (j.contains("mediaType") && j["mediaType"].is_string()) d.media_type = j["mediaType"].get<std::string>();
  if (!is_sha256_digest(d.digest))
    throw Error(file,
                where + ": unsupported or malformed digest '" + d.digest + "' (sha256:<64 hex> expected)");
  return d;
}

bool is_index_media_type(const std::string& t) {
  return t == "application/vnd.oci.image.index.v1+json" ||
         t == "application/vnd.docker.distribution.manifest.list.v2+json";
}

}  // namespace trainimg::inspect
