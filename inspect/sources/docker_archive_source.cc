// SPDX-License-Identifier: GPL-3.0-or-later
#include "inspect/sources/docker_archive_source.h"

#include <fcntl.h>
#include <sys/stat.h>

#include <map>

#include "common/error.h"
#include "common/fd.h"
#include "inspect/sources/docker_archive_stream.h"
#include "inspect/sources/image_config.h"
#include "inspect/sources/tar_layer.h"

namespace trainimg::inspect {
namespace {

// JSON members larger than this are refused (a config is kilobytes).
constexpr uint64_t kMaxJsonMember = 16 << 20;
// Bytes allowed after a layer tar's end-of-archive marker (block padding).
constexpr uint64_t kMaxTrailing = 1 << 20;
// Members linking to members: docker's old layout links duplicate layers.
constexpr int kMaxLinkHops = 16;

struct Member {
  EntryType type = EntryType::File;
  uint64_t offset = 0, size = 0;
  std::string link;  // symlink target (verbatim) or hard-link target (member name)
};

std::string parent_member(const std::string& m) {
  auto slash = m.rfind('/');
  return slash == std::string::npos ? "" : m.substr(0, slash);
}

class DockerArchiveSource : public ImageSource {
 public:
  DockerArchiveSource(std::string path, std::string ref, UniqueFd fd, uint64_t size)
      : path_(std::move(path)), ref_(std::move(ref)), fd_(std::move(fd)), size_(size) {}

  // Indexes member headers; false when the archive is compressed (no seeking).
  bool index() {
    FileRange whole(fd_.get(), 0, size_, path_);
    TarReader t(whole, path_, "", 16 * 1024);
    while (archive_entry* ae = t.next()) {
      if (t.compressed()) return false;
      const char* raw = archive_entry_pathname(ae);
      std::string why;
      auto p = safe_member_path(raw ? raw : "", why);
      if (!p) t.fail("member '" + std::string(raw ? raw : "") + "'", why);
      Member m;
      m.offset = static_cast<uint64_t>(t.data_offset());
      m.size = static_cast<uint64_t>(std::max<la_int64_t>(archive_entry_size(ae), 0));
      if (const char* h = archive_entry_hardlink(ae)) {
        m.type = EntryType::Hardlink;
        auto hp = safe_member_path(h, why);
        if (!hp) t.fail("member '" + std::string(raw) + "'", "hard link target: " + why);
        m.link = hp->substr(1);
      } else if (archive_entry_filetype(ae) == AE_IFLNK) {
        m.type = EntryType::Symlink;
        m.link = archive_entry_symlink(ae) ? archive_entry_symlink(ae) : "";
      } else if (archive_entry_filetype(ae) == AE_IFDIR) {
        m.type = EntryType::Dir;
      } else if (archive_entry_filetype(ae) != AE_IFREG) {
        continue;
      }
      if (m.type == EntryType::File && m.offset + m.size > size_)
        t.fail("member '" + std::string(raw) + "'", "claims " + std::to_string(m.size) + " bytes at offset " +
                                                        std::to_string(m.offset) + " but the file has " +
                                                        std::to_string(size_));
      members_[p->substr(1)] = m;
    }
    return true;
  }

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
                             " diff_ids but manifest.json names " + std::to_string(image_.layers.size()) + " layers");
    for (size_t i = 0; i < image_.layers.size(); ++i) desc_.layers.push_back(layer_id(i));
  }

  ImageDescription describe() override { return desc_; }

  void walk(LayerVisitor& v) override {
    for (size_t i = 0; i < image_.layers.size(); ++i) {
      const std::string& name = image_.layers[i];
      const Member& m = resolve(name);
      FileRange range(fd_.get(), m.offset, m.size, path_);
      HashingSource hashed(range, /*allow_seek=*/true);
      walk_layer_tar(hashed, LayerInput{path_, name, layer_id(i), i}, v);
      verify_layer(i, hashed);
    }
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
      throw Error(path_, "layer '" + name + "': digest mismatch: expected " + want + ", the content is " + *got);
  }

  const Member& resolve(const std::string& name) const {
    std::string cur = name;
    for (int hop = 0; hop <= kMaxLinkHops; ++hop) {
      auto it = members_.find(cur);
      if (it == members_.end()) {
        if (name == "manifest.json") throw Error(path_, "no manifest.json: not a docker archive (docker save output)");
        throw Error(path_, "member '" + name + "' named by manifest.json is missing");
      }
      const Member& m = it->second;
      if (m.type == EntryType::File) return m;
      if (m.type == EntryType::Dir) throw Error(path_, "member '" + name + "' is a directory");
      std::string next = m.type == EntryType::Hardlink ? m.link : parent_member(cur) + "/" + m.link;
      std::string why;
      auto p = safe_member_path(next, why);
      if (!p) throw Error(path_, "member '" + cur + "' links out of the archive: " + why);
      cur = p->substr(1);
    }
    throw Error(path_, "member '" + name + "': too many links");
  }

  std::string read_member(const std::string& name) const {
    const Member& m = resolve(name);
    if (m.size > kMaxJsonMember)
      throw Error(path_, "member '" + name + "' is " + std::to_string(m.size) + " bytes, too large for JSON");
    std::string out(m.size, '\0');
    FileRange r(fd_.get(), m.offset, m.size, path_);
    size_t done = 0;
    while (done < out.size()) {
      size_t got = r.read(out.data() + done, out.size() - done);
      if (got == 0) throw Error(path_, "member '" + name + "' is truncated");
      done += got;
    }
    return out;
  }

  std::string path_, ref_;
  UniqueFd fd_;
  uint64_t size_;
  std::map<std::string, Member> members_;
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
    src->load();
    return src;
  }
  UniqueFd again(open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!again) throw_errno(path, "cannot open docker archive");
  return std::make_unique<StreamedFileSource>(path, ref, std::move(again), size);
}

}  // namespace trainimg::inspect
