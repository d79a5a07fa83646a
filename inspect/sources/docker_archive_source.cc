// SPDX-License-Identifier: GPL-3.0-or-later
#include "inspect/sources/docker_archive_source.h"

#include <fcntl.h>
#include <sys/stat.h>

#include <map>

#include "common/error.h"
#include "common/fd.h"
#include "inspect/sources/docker_archive_stream.h"
#include "inspect/sources/image_config.h"
#include "inspect/sources/oci_layout_source.h"
#include "inspect/sources/tar_layer.h"

namespace trainimg::inspect {
namespace {

// JSON members larger than this are refused (a config is kilobytes).
constexpr uint64_t kMaxJsonMember = 16 << 20;
// Bytes allowed after a layer tar's end-of-archive marker (block padding).
constexpr uint64_t kMaxTrailing = 1 << 20;
class DockerArchiveSource : public ImageSource {
 public:
  DockerArchiveSource(std::string path, std::string ref, UniqueFd fd, uint64_t size)
      : path_(std::move(path)), ref_(std::move(ref)), fd_(std::move(fd)), size_(size) {}

  // Indexes member headers; false when the archive is compressed (no seeking).
  bool index() { return tar_.index(fd_.get(), size_, path_); }
  /// An OCI image layout in a tar (oci-archive) rather than `docker save`'s
  /// output (Docker 25+ writes both manifest.json and an OCI layout).
  bool oci_layout_only() const {
    return !tar_.contains("manifest.json") && tar_.contains("index.json") && tar_.contains("oci-layout");
  }
  std::pair<UniqueFd, TarIndex> release() { return {std::move(fd_), std::move(tar_)}; }

  void load() {
    auto manifest = parse_json(read_member("manifest.json"), path_, "manifest.json");
    image_ = select_archive_image(manifest, ref_, path_);
    std::string config = read_member(image_.config);
    std::string claimed = digest_from_member_name(image_.config);
    desc_.config_digest = sha256_digest(config);
    if (!claimed.empty() && claimed != desc_.config_digest)
      throw Error(path_, "config '" + image_.config + "': digest mismatch: the name says " + claimed +
                             ", the content is " + desc_.config_digest);
    auto parsed = parse_image_config(parse_json(config, path_, image_.config), path_, image_.config);
    desc_.reference = "docker-archive:" + path_ + (ref_.empty() ? "" : ":" + ref_);
    desc_.kind = "docker-archive";
    desc_.has_config = true;
    desc_.config = parsed.config;
    diff_ids_ = parsed.diff_ids;
    if (!diff_ids_.empty() && diff_ids_.size() != image_.layers.size())
      throw Error(path_, "'" + image_.config + "' lists " + std::to_string(diff_ids_.size()) +
                             " diff_ids but manifest.json names " + std::to_string(image_.layers.size()) +
                             " layers");
    for (size_t i = 0; i < image_.layers.size(); ++i) {
      desc_.layers.push_back(layer_id(i));
      desc_.layer_bytes.push_back(resolve(image_.layers[i]).size);
    }
  }

  ImageDescription describe() override { return desc_; }

  void walk(LayerVisitor& v) override {
    for (size_t i = 0; i < image_.layers.size(); ++i)
      if (v.want_layer(desc_.layers[i], i)) walk_layer(i, v);
  }

  bool can_walk_layer(size_t i) const override { return i < image_.layers.size(); }

  // Reads with pread through a range of its own: calls for different
  // layers run side by side.
  void walk_layer(size_t i, LayerVisitor& v) override {
    if (i >= image_.layers.size()) ImageSource::walk_layer(i, v);
    const std::string& name = image_.layers[i];
    const TarIndex::Member& m = resolve(name);
    FileRange range(fd_.get(), m.offset, m.size, path_);
    HashingSource hashed(range, /*allow_seek=*/true);
    walk_layer_tar(hashed, LayerInput{path_, name, layer_id(i), i}, v);
    verify_layer(i, hashed);
  }

 private:
  std::string layer_id(size_t i) const {
    if (i < diff_ids_.size()) return diff_ids_[i];
    std::string d = digest_from_member_name(image_.layers[i]);
    return d.empty() ? image_.layers[i] : d;
  }

  void verify_layer(size_t i, HashingSource& hashed) {
    const std::string& name = image_.layers[i];
    auto got = hashed.finish(path_, "layer " + name, kMaxTrailing);
    if (!got) return;  // data was seeked over: nothing to compare
    std::string want = digest_from_member_name(name);
    if (want.empty() && i < diff_ids_.size()) {
      // A legacy <id>/layer.tar: its sha256 is the diff_id when uncompressed.
      char magic[4] = {};
      FileRange head(fd_.get(), resolve(name).offset, 4, path_);
      head.read(magic, 4);
      bool gzip = magic[0] == '\x1f' && magic[1] == '\x8b';
      bool zstd = magic[0] == '\x28' && magic[1] == '\xb5' && magic[2] == '\x2f' && magic[3] == '\xfd';
      if (!gzip && !zstd) want = diff_ids_[i];
    }
    if (!want.empty() && *got != want)
      throw Error(path_,
                  "layer '" + name + "': digest mismatch: expected " + want + ", the content is " + *got);
  }

  const TarIndex::Member& resolve(const std::string& name) const {
    if (const TarIndex::Member* m = tar_.resolve(name)) return *m;
    if (name == "manifest.json")
      throw Error(path_, "no manifest.json: not a docker archive (docker save output)");
    throw Error(path_, "member '" + name + "' named by manifest.json is missing");
  }

  std::string read_member(const std::string& name) const {
    return tar_.read(resolve(name), name, kMaxJsonMember);
  }

  std::string path_, ref_;
  UniqueFd fd_;
  uint64_t size_;
  TarIndex tar_;
  ArchiveImage image_;
  std::vector<std::string> diff_ids_;
  ImageDescription desc_;
};

// A compressed archive file: every walk is one streaming pass.
class StreamedFileSource : public ImageSource {
 public:
  StreamedFileSource(std::string path, std::string ref, UniqueFd fd, uint64_t size)
      : path_(std::move(path)), ref_(std::move(ref)), fd_(std::move(fd)), size_(size) {
    desc_ = pass(nullptr);
  }
  ImageDescription describe() override { return desc_; }
  void walk(LayerVisitor& v) override { pass(&v); }

 private:
  ImageDescription pass(LayerVisitor* v) {
    FileRange whole(fd_.get(), 0, size_, path_);
    ImageDescription d = read_docker_archive_stream(whole, path_, ref_, v);
    d.reference = "docker-archive:" + path_ + (ref_.empty() ? "" : ":" + ref_);
    d.kind = "docker-archive";
    return d;
  }
  std::string path_, ref_;
  UniqueFd fd_;
  uint64_t size_;
  ImageDescription desc_;
};

}  // namespace

std::unique_ptr<ImageSource> open_docker_archive_source(const std::string& spec) {
  // "PATH:REF" only when PATH alone is not a file: paths may contain ':'.
  std::string path = spec, ref;
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) {
    for (auto colon = spec.find(':'); colon != std::string::npos; colon = spec.find(':', colon + 1))
      if (colon > 0 && stat(spec.substr(0, colon).c_str(), &st) == 0) {
        path = spec.substr(0, colon);
        ref = spec.substr(colon + 1);
        break;
      }
  }
  UniqueFd fd(open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd) throw_errno(path, "cannot open docker archive");
  if (fstat(fd.get(), &st) != 0) throw_errno(path, "stat");
  if (!S_ISREG(st.st_mode)) throw Error(path, "a docker archive must be a regular file (tar)");
  auto size = static_cast<uint64_t>(st.st_size);
  auto src = std::make_unique<DockerArchiveSource>(path, ref, std::move(fd), size);
  if (src->index()) {
    if (src->oci_layout_only()) {
      auto [tar_fd, index] = src->release();
      return open_oci_archive_source(path, ref, std::move(tar_fd), std::move(index));
    }
    src->load();
    return src;
  }
  UniqueFd again(open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!again) throw_errno(path, "cannot open docker archive");
  return std::make_unique<StreamedFileSource>(path, ref, std::move(again), size);
}

}  // namespace trainimg::inspect
