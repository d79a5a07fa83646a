// SPDX-License-Identifier: GPL-3.0-or-later
#include "inspect/sources/oci_layout_source.h"

#include <fcntl.h>
#include <sys/stat.h>

#include <cstdlib>

#include "common/error.h"
#include "common/fd.h"
#include "common/sha256.h"
#include "inspect/sources/image_config.h"
#include "inspect/sources/tar_layer.h"

namespace trainimg::inspect {
namespace {

using nlohmann::json;

constexpr uint64_t kMaxJsonBlob = 16 << 20;
constexpr uint64_t kMaxTrailing = 1 << 20;
constexpr int kMaxIndexDepth = 4;

// One file of a layout as a byte range of an open file.
struct Span {
  UniqueFd owned;  ///< set when the span has a file of its own (a directory layout)
  int fd = -1;
  uint64_t offset = 0, size = 0;
};

// Where a layout's files are: a directory (oci:DIR) or the members of an
// uncompressed tar (oci-archive:FILE, what `skopeo copy … oci-archive:` and
// BuildKit's `--output type=oci` write).
class LayoutFiles {
 public:
  virtual ~LayoutFiles() = default;
  /// "oci-layout", "index.json" or "blobs/sha256/HEX"; throws Error naming
  /// the layout (missing, not a regular file, a symlink out of it).
  virtual Span open(const std::string& name) const = 0;
};

class DirFiles : public LayoutFiles {
 public:
  DirFiles(std::string dir, UniqueFd blobs) : dir_(std::move(dir)), blobs_(std::move(blobs)) {}
  Span open(const std::string& name) const override {
    constexpr std::string_view kBlobs = "blobs/sha256/";
    const bool blob = name.starts_with(kBlobs);
    UniqueFd fd(blob ? openat(blobs_.get(), name.c_str() + kBlobs.size(),
                              O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK)
                     : ::open((dir_ + "/" + name).c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK));
    if (!fd) {
      if (errno == ENOENT)
        throw Error(dir_, blob ? name + ": missing blob" : "no " + name + ": not an OCI image layout");
      if (errno == ELOOP) throw Error(dir_, name + ": a symlink; blobs are only read from inside the layout");
      throw_errno(dir_ + "/" + name, "cannot open");
    }
    struct stat st {};
    if (fstat(fd.get(), &st) != 0) throw_errno(dir_ + "/" + name, "stat");
    if (!S_ISREG(st.st_mode)) throw Error(dir_, name + ": not a regular file");
    Span s;
    s.fd = fd.get();
    s.size = static_cast<uint64_t>(st.st_size);
    s.owned = std::move(fd);
    return s;
  }

 private:
  std::string dir_;
  UniqueFd blobs_;
};

class TarFiles : public LayoutFiles {
 public:
  TarFiles(std::string file, UniqueFd fd, TarIndex index)
      : file_(std::move(file)), fd_(std::move(fd)), index_(std::move(index)) {}
  Span open(const std::string& name) const override {
    const TarIndex::Member* m = index_.resolve(name);
    if (!m) {
      if (name.starts_with("blobs/")) throw Error(file_, name + ": missing blob");
      throw Error(file_, "no " + name + ": not an OCI image layout archive");
    }
    Span s;
    s.fd = fd_.get();
    s.offset = m->offset;
    s.size = m->size;
    return s;
  }

 private:
  std::string file_;
  UniqueFd fd_;
  TarIndex index_;
};

class OciLayoutSource : public ImageSource {
 public:
  // `kind` "oci" (a directory) or "oci-archive" (a tar of one).
  OciLayoutSource(std::string dir, std::string tag, std::unique_ptr<LayoutFiles> files, std::string kind)
      : dir_(std::move(dir)), tag_(std::move(tag)), files_(std::move(files)), kind_(std::move(kind)) {}

  void load() {
    auto layout = parse_json(read_file("oci-layout"), dir_, "oci-layout");
    if (!layout.is_object() || !layout.contains("imageLayoutVersion"))
      throw Error(dir_, "oci-layout: no imageLayoutVersion: not an OCI image layout");
    json index = parse_json(read_file("index.json"), dir_, "index.json");
    Descriptor d = pick_from_index(index, "index.json", /*top=*/true);
    for (int depth = 0; is_index_media_type(d.media_type); ++depth) {
      if (depth == kMaxIndexDepth) throw Error(dir_, "image indexes nested too deeply");
      d = pick_from_index(parse_json(read_blob(d), dir_, blob_name(d)), blob_name(d), /*top=*/false);
    }
    json manifest = parse_json(read_blob(d), dir_, blob_name(d));
    desc_.digest = d.digest;
    if (!manifest.is_object() || !manifest.contains("config") || !manifest.contains("layers") ||
        !manifest["layers"].is_array())
      throw Error(dir_, blob_name(d) + ": not an image manifest (no config or layers)");
    Descriptor config = descriptor(manifest["config"], blob_name(d));
    desc_.config_digest = config.digest;
    auto parsed =
        parse_image_config(parse_json(read_blob(config), dir_, blob_name(config)), dir_, blob_name(config));
    for (const auto& l : manifest["layers"]) {
      Descriptor ld = descriptor(l, blob_name(d));
      if (!is_layer_media_type(ld.media_type))
        throw Error(dir_, blob_name(ld) + ": unsupported layer media type '" + ld.media_type + "'");
      layers_.push_back(ld);
    }
    if (!parsed.diff_ids.empty() && parsed.diff_ids.size() != layers_.size())
      throw Error(dir_, blob_name(config) + " lists " + std::to_string(parsed.diff_ids.size()) +
                            " diff_ids but the manifest has " + std::to_string(layers_.size()) + " layers");
    desc_.reference = kind_ + ":" + dir_ + (tag_.empty() ? "" : ":" + tag_);
    desc_.kind = kind_;
    desc_.has_config = true;
    desc_.config = parsed.config;
    for (size_t i = 0; i < layers_.size(); ++i)
      desc_.layers.push_back(i < parsed.diff_ids.size() ? parsed.diff_ids[i] : layers_[i].digest);
    for (const auto& l : layers_) desc_.layer_bytes.push_back(l.size);
  }

  ImageDescription describe() override { return desc_; }

  void walk(LayerVisitor& v) override {
    for (size_t i = 0; i < layers_.size(); ++i)
      if (v.want_layer(desc_.layers[i], i)) walk_layer(i, v);
  }

  bool can_walk_layer(size_t i) const override { return i < layers_.size(); }

  // Each call opens its own descriptor or reads with pread: calls for
  // different layers run side by side.
  void walk_layer(size_t i, LayerVisitor& v) override {
    if (i >= layers_.size()) ImageSource::walk_layer(i, v);
    const Descriptor& ld = layers_[i];
    Span blob = open_blob(ld);
    FileRange range(blob.fd, blob.offset, ld.size, dir_);
    HashingSource hashed(range, /*allow_seek=*/false);
    walk_layer_tar(hashed, LayerInput{dir_, blob_name(ld), desc_.layers[i], i}, v);
    std::string got = *hashed.finish(dir_, "layer " + blob_name(ld), kMaxTrailing);
    if (got != ld.digest) throw mismatch(ld, got);
  }

 private:
  static std::string blob_name(const Descriptor& d) { return "blobs/sha256/" + d.digest.substr(7); }

  Error mismatch(const Descriptor& d, const std::string& got) const {
    return Error(dir_, blob_name(d) + ": digest mismatch: the content is " + got);
  }

  Descriptor descriptor(const json& j, const std::string& where) const {
    return parse_descriptor(j, dir_, where);
  }

  Descriptor pick_from_index(const json& index, const std::string& where, bool top) const {
    if (!index.is_object() || !index.contains("manifests") || !index["manifests"].is_array())
      throw Error(dir_, where + ": no 'manifests' list");
    const json& ms = index["manifests"];
    if (top && !tag_.empty()) {
      std::string tags;
      for (const auto& m : ms) {
        std::string name =
            json_string_at(m, "/annotations/org.opencontainers.image.ref.name"_json_pointer, dir_, where);
        if (name == tag_ || (name.size() > tag_.size() && name.ends_with(":" + tag_)))
          return descriptor(m, where);
        if (!name.empty()) tags += (tags.empty() ? "" : ", ") + name;
      }
      throw Error(dir_, "no manifest tagged '" + tag_ +
                            "' in index.json (tags: " + (tags.empty() ? "none" : tags) + ")");
    }
    if (ms.size() == 1) return descriptor(ms[0], where);
    const char* env = std::getenv("TRAINIMG_PLATFORM");
    const std::string platform = env && *env ? env : "linux/amd64";
    std::string seen;
    for (const auto& m : ms) {
      std::string os = json_string_at(m, "/platform/os"_json_pointer, dir_, where);
      std::string arch = json_string_at(m, "/platform/architecture"_json_pointer, dir_, where);
      if (os + "/" + arch == platform) return descriptor(m, where);
      if (!os.empty()) seen += (seen.empty() ? "" : ", ") + os + "/" + arch;
    }
    if (top && seen.empty())
      throw Error(dir_, where + " lists " + std::to_string(ms.size()) + " images; name one: " + kind_ + ":" +
                            dir_ + ":TAG");
    throw Error(dir_,
                where + ": no " + platform + " image (platforms: " + (seen.empty() ? "none" : seen) + ")");
  }

  Span open_blob(const Descriptor& d) const {
    Span blob = files_->open(blob_name(d));
    if (blob.size != d.size)
      throw Error(dir_, blob_name(d) + ": size mismatch: the descriptor says " + std::to_string(d.size) +
                            " bytes, the blob has " + std::to_string(blob.size));
    return blob;
  }

  std::string read_blob(const Descriptor& d) const {
    if (d.size > kMaxJsonBlob)
      throw Error(dir_,
                  blob_name(d) + ": " + std::to_string(d.size) + " bytes is too large for a JSON document");
    Span blob = open_blob(d);
    std::string out = read_all(blob, blob_name(d));
    std::string got = sha256_digest(out);
    if (got != d.digest) throw mismatch(d, got);
    return out;
  }

  std::string read_file(const std::string& name) const {
    Span f = files_->open(name);
    if (f.size > kMaxJsonBlob) throw Error(dir_, name + ": too large for a JSON document");
    return read_all(f, name);
  }

  std::string read_all(const Span& f, const std::string& name) const {
    std::string out(f.size, '\0');
    FileRange r(f.fd, f.offset, f.size, dir_ + "/" + name);
    for (size_t done = 0; done < out.size();) {
      size_t got = r.read(out.data() + done, out.size() - done);
      if (got == 0) throw Error(dir_, name + ": truncated");
      done += got;
    }
    return out;
  }

  std::string dir_, tag_;
  std::unique_ptr<LayoutFiles> files_;
  std::string kind_;
  ImageDescription desc_;
  std::vector<Descriptor> layers_;
};

// "PATH:TAG" -> {PATH, TAG}, only when PATH alone does not exist (paths
// may contain ':').
std::pair<std::string, std::string> split_tag(const std::string& spec) {
  struct stat st {};
  auto colon = spec.rfind(':');
  if (stat(spec.c_str(), &st) == 0 || colon == std::string::npos || colon == 0) return {spec, ""};
  return {spec.substr(0, colon), spec.substr(colon + 1)};
}

}  // namespace

std::unique_ptr<ImageSource> open_oci_layout_source(const std::string& spec) {
  auto [dir, tag] = split_tag(spec);
  struct stat st {};
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  if (stat(dir.c_str(), &st) != 0) throw_errno(dir, "cannot open OCI layout");
  if (!S_ISDIR(st.st_mode)) throw Error(dir, "an OCI image layout is a directory");
  UniqueFd blobs(open((dir + "/blobs/sha256").c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!blobs) throw Error(dir, "no blobs/sha256 directory: not an OCI image layout");
  auto src =
      std::make_unique<OciLayoutSource>(dir, tag, std::make_unique<DirFiles>(dir, std::move(blobs)), "oci");
  src->load();
  return src;
}

std::unique_ptr<ImageSource> open_oci_archive_source(const std::string& spec) {
  // "PATH:TAG" only when PATH alone is not a file: paths may contain ':'.
  auto [path, tag] = split_tag(spec);
  struct stat st {};
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd) throw_errno(path, "cannot open OCI archive");
  if (fstat(fd.get(), &st) != 0) throw_errno(path, "stat");
  if (!S_ISREG(st.st_mode)) throw Error(path, "an OCI archive must be a regular file (tar)");
  TarIndex index;
  if (!index.index(fd.get(), static_cast<uint64_t>(st.st_size), path))
    throw Error(path, "a compressed OCI archive cannot be read in place",
                "decompress it first (e.g. zstd -d / gunzip), or extract it and use oci:DIR");
  return open_oci_archive_source(path, tag, std::move(fd), std::move(index));
}

std::unique_ptr<ImageSource> open_oci_archive_source(const std::string& path, const std::string& tag,
                                                     UniqueFd fd, TarIndex index) {
  auto src = std::make_unique<OciLayoutSource>(
      path, tag, std::make_unique<TarFiles>(path, std::move(fd), std::move(index)), "oci-archive");
  src->load();
  return src;
}

}  // namespace trainimg::inspect
