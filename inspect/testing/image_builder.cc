// SPDX-License-Identifier: GPL-3.0-or-later
#include "inspect/testing/image_builder.h"

#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <stdexcept>

#include "common/sha256.h"
#include "inspect/sources/archive_handles.h"
#include "inspect/sources/string_source.h"

namespace trainimg::inspect::testing {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

SpecEntry make(const std::string& path, EntryType t, uint32_t mode) {
  SpecEntry s;
  s.entry.path = path;
  s.entry.type = t;
  s.entry.mode = mode;
  return s;
}

std::string parent_of(const std::string& p) {
  auto slash = p.rfind('/');
  return slash == 0 ? "/" : p.substr(0, slash);
}

std::string hex_of(const std::string& digest) {
  return digest.substr(std::string("sha256:").size());
}

void fail(const std::string& what) {
  throw std::runtime_error("image_builder: " + what);
}

// Writes one member into an archive writer.
void add_member(archive* a, const std::string& name, EntryType t, const std::string& data, uint32_t mode,
                const std::string& link = {}, uint32_t maj = 0, uint32_t min = 0) {
  ArchiveEntryPtr e(archive_entry_new());
  archive_entry_set_pathname(e.get(), name.c_str());
  archive_entry_set_mtime(e.get(), 0, 0);
  archive_entry_set_uid(e.get(), 0);
  archive_entry_set_gid(e.get(), 0);
  archive_entry_set_perm(e.get(), mode);
  switch (t) {
    case EntryType::Dir: archive_entry_set_filetype(e.get(), AE_IFDIR); break;
    case EntryType::Symlink:
      archive_entry_set_filetype(e.get(), AE_IFLNK);
      archive_entry_set_symlink(e.get(), link.c_str());
      break;
    case EntryType::Hardlink:
      archive_entry_set_filetype(e.get(), AE_IFREG);
      archive_entry_set_hardlink(e.get(), link.c_str());
      break;
    case EntryType::Fifo: archive_entry_set_filetype(e.get(), AE_IFIFO); break;
    case EntryType::CharDev:
    case EntryType::BlockDev:
      archive_entry_set_filetype(e.get(), t == EntryType::CharDev ? AE_IFCHR : AE_IFBLK);
      archive_entry_set_rdevmajor(e.get(), maj);
      archive_entry_set_rdevminor(e.get(), min);
      break;
    case EntryType::Socket: archive_entry_set_filetype(e.get(), AE_IFSOCK); break;
    case EntryType::File:
      archive_entry_set_filetype(e.get(), AE_IFREG);
      archive_entry_set_size(e.get(), static_cast<la_int64_t>(data.size()));
      break;
  }
  if (archive_write_header(a, e.get()) < ARCHIVE_WARN)
    fail(std::string("write header: ") + archive_error_string(a));
  if (t == EntryType::File && !data.empty() &&
      archive_write_data(a, data.data(), data.size()) != static_cast<la_ssize_t>(data.size()))
    fail(std::string("write data: ") + archive_error_string(a));
}

// A tar written to memory through libarchive.
class TarWriter {
 public:
  explicit TarWriter(Compression c) : a_(new_archive_writer()) {
    archive_write_set_format_pax_restricted(a_.get());
    if (c == Compression::Gzip) archive_write_add_filter_gzip(a_.get());
    if (c == Compression::Zstd) archive_write_add_filter_zstd(a_.get());
    archive_write_set_bytes_in_last_block(a_.get(), 1);
    if (archive_write_open2(a_.get(), &out_, nullptr, &TarWriter::write_cb, nullptr, nullptr) != ARCHIVE_OK)
      fail(std::string("open: ") + archive_error_string(a_.get()));
  }
  archive* get() { return a_.get(); }
  void add(const std::string& name, const std::string& data, uint32_t mode = 0644) {
    add_member(a_.get(), name, EntryType::File, data, mode);
  }
  std::string finish() {
    if (archive_write_close(a_.get()) != ARCHIVE_OK)
      fail(std::string("close: ") + archive_error_string(a_.get()));
    return std::move(out_);
  }

 private:
  static la_ssize_t write_cb(archive*, void* out, const void* buf, size_t n) {
    static_cast<std::string*>(out)->append(static_cast<const char*>(buf), n);
    return static_cast<la_ssize_t>(n);
  }
  ArchiveWriter a_;
  std::string out_;
};

json config_doc(const ImageSpec& img, const std::string& arch) {
  const ImageConfig& c = img.config;
  json cfg = json::object();
  if (!c.env.empty()) cfg["Env"] = c.env;
  if (!c.entrypoint.empty()) cfg["Entrypoint"] = c.entrypoint;
  if (!c.cmd.empty()) cfg["Cmd"] = c.cmd;
  if (!c.workdir.empty()) cfg["WorkingDir"] = c.workdir;
  if (!c.user.empty()) cfg["User"] = c.user;
  if (!c.labels.empty()) cfg["Labels"] = c.labels;
  if (!c.volumes.empty()) {
    json v = json::object();
    for (const auto& vol : c.volumes) v[vol] = json::object();
    cfg["Volumes"] = v;
  }
  return json{{"architecture", arch},
              {"os", c.os.empty() ? "linux" : c.os},
              {"config", cfg},
              {"rootfs", {{"type", "layers"}, {"diff_ids", diff_ids(img)}}}};
}

std::string media_type(Compression c) {
  switch (c) {
    case Compression::Gzip: return "application/vnd.oci.image.layer.v1.tar+gzip";
    case Compression::Zstd: return "application/vnd.oci.image.layer.v1.tar+zstd";
    case Compression::None: break;
  }
  return "application/vnd.oci.image.layer.v1.tar";
}

json descriptor(const std::string& mt, const std::string& bytes) {
  return json{{"mediaType", mt}, {"digest", sha256_digest(bytes)}, {"size", bytes.size()}};
}

std::string tag_part(const std::string& tag) {
  auto colon = tag.rfind(':');
  return colon == std::string::npos ? "latest" : tag.substr(colon + 1);
}

// The blobs of one OCI image manifest: layer blobs, config, manifest.
struct OciBlobs {
  std::vector<std::pair<std::string, std::string>> blobs;  // digest, bytes (in write order)
  json manifest_descriptor;
};

OciBlobs oci_blobs(const ImageSpec& img, Compression c, const std::string& arch) {
  OciBlobs out;
  json layers = json::array();
  for (const auto& l : img.layers) {
    std::string blob = layer_tar(l, c);
    layers.push_back(descriptor(media_type(c), blob));
    out.blobs.emplace_back(sha256_digest(blob), std::move(blob));
  }
  std::string config = config_doc(img, arch).dump();
  json manifest = {{"schemaVersion", 2},
                   {"mediaType", "application/vnd.oci.image.manifest.v1+json"},
                   {"config", descriptor("application/vnd.oci.image.config.v1+json", config)},
                   {"layers", layers}};
  out.blobs.emplace_back(sha256_digest(config), config);
  std::string m = manifest.dump();
  out.manifest_descriptor = descriptor("application/vnd.oci.image.manifest.v1+json", m);
  out.manifest_descriptor["platform"] = {{"architecture", arch}, {"os", "linux"}};
  out.blobs.emplace_back(sha256_digest(m), m);
  return out;
}

}  // namespace

LayerSpec& LayerSpec::dir(const std::string& path, uint32_t mode) {
  return raw(make(path, EntryType::Dir, mode));
}

LayerSpec& LayerSpec::file(const std::string& path, const std::string& data, uint32_t mode) {
  SpecEntry s = make(path, EntryType::File, mode);
  s.data = data;
  s.entry.size = data.size();
  return raw(std::move(s));
}

LayerSpec& LayerSpec::symlink(const std::string& path, const std::string& target) {
  SpecEntry s = make(path, EntryType::Symlink, 0777);
  s.entry.link_target = target;
  return raw(std::move(s));
}

LayerSpec& LayerSpec::hardlink(const std::string& path, const std::string& target) {
  SpecEntry s = make(path, EntryType::Hardlink, 0644);
  s.entry.link_target = target;
  return raw(std::move(s));
}

LayerSpec& LayerSpec::whiteout(const std::string& path) {
  std::string name = path.substr(path.rfind('/') + 1);
  std::string dir = parent_of(path);
  return file((dir == "/" ? "" : dir) + "/.wh." + name, "", 0644);
}

LayerSpec& LayerSpec::opaque(const std::string& dir) {
  return file((dir == "/" ? "" : dir) + "/.wh..wh..opq", "", 0644);
}

LayerSpec& LayerSpec::fifo(const std::string& path) {
  return raw(make(path, EntryType::Fifo, 0644));
}

LayerSpec& LayerSpec::chardev(const std::string& path, uint32_t major, uint32_t minor) {
  SpecEntry s = make(path, EntryType::CharDev, 0666);
  s.entry.rdev_major = major;
  s.entry.rdev_minor = minor;
  return raw(std::move(s));
}

LayerSpec& LayerSpec::raw(SpecEntry e) {
  entries.push_back(std::move(e));
  return *this;
}

std::string layer_tar(const LayerSpec& l, Compression c) {
  TarWriter w(c);
  for (const auto& s : l.entries) {
    const Entry& e = s.entry;
    std::string name = s.raw_name.empty() ? e.path.substr(1) : s.raw_name;
    std::string link = e.link_target;
    if (e.type == EntryType::Hardlink && !link.empty() && link[0] == '/') link = link.substr(1);
    add_member(w.get(), name, e.type, s.data, e.mode, link, e.rdev_major, e.rdev_minor);
  }
  return w.finish();
}

std::vector<std::string> diff_ids(const ImageSpec& img) {
  std::vector<std::string> out;
  for (const auto& l : img.layers) out.push_back(sha256_digest(layer_tar(l, Compression::None)));
  return out;
}

std::string config_json(const ImageSpec& img) {
  return config_doc(img, img.config.architecture.empty() ? "amd64" : img.config.architecture).dump();
}

void write_docker_archive(const ImageSpec& img, const std::string& path, ArchiveLayout layout,
                          Compression c) {
  TarWriter w(Compression::None);
  const std::string config = config_json(img);
  const std::string config_hex = hex_of(sha256_digest(config));
  json layers = json::array();
  if (layout == ArchiveLayout::Legacy) {
    for (size_t i = 0; i < img.layers.size(); ++i) {
      std::string blob = layer_tar(img.layers[i], c);
      std::string id = hex_of(sha256_digest(blob + std::to_string(i)));  // a v1 id: any 64 hex digits
      add_member(w.get(), id, EntryType::Dir, "", 0755);
      w.add(id + "/VERSION", "1.0");
      w.add(id + "/json", json{{"id", id}}.dump());
      w.add(id + "/layer.tar", blob);
      layers.push_back(id + "/layer.tar");
    }
    w.add(config_hex + ".json", config);
    w.add("manifest.json",
          json::array({{{"Config", config_hex + ".json"}, {"RepoTags", {img.tag}}, {"Layers", layers}}})
              .dump());
    return write_bytes(path, w.finish());
  }
  // Docker 25+: an OCI layout inside the archive, blobs first, the JSON files last.
  OciBlobs b = oci_blobs(img, c, "amd64");
  std::set<std::string> written;
  add_member(w.get(), "blobs", EntryType::Dir, "", 0755);
  add_member(w.get(), "blobs/sha256", EntryType::Dir, "", 0755);
  for (const auto& [digest, bytes] : b.blobs)
    if (written.insert(digest).second) w.add("blobs/sha256/" + hex_of(digest), bytes);
  for (size_t i = 0; i < img.layers.size(); ++i) layers.push_back("blobs/sha256/" + hex_of(b.blobs[i].first));
  json md = b.manifest_descriptor;
  md.erase("platform");
  md["annotations"] = {{"io.containerd.image.name", "docker.io/library/" + img.tag},
                       {"org.opencontainers.image.ref.name", tag_part(img.tag)}};
  w.add("index.json", json{{"schemaVersion", 2},
                           {"mediaType", "application/vnd.oci.image.index.v1+json"},
                           {"manifests", {md}}}
                          .dump());
  w.add("manifest.json",
        json::array({{{"Config", "blobs/sha256/" + config_hex}, {"RepoTags", {img.tag}}, {"Layers", layers}}})
            .dump());
  w.add("oci-layout", R"({"imageLayoutVersion":"1.0.0"})");
  write_bytes(path, w.finish());
}

void write_oci_layout(const ImageSpec& img, const std::string& dir, const OciOptions& o) {
  fs::create_directories(dir + "/blobs/sha256");
  auto put = [&](const std::string& digest, const std::string& bytes) {
    write_bytes(dir + "/blobs/sha256/" + hex_of(digest), bytes);
  };
  OciBlobs amd = oci_blobs(img, o.compression, "amd64");
  for (const auto& [d, bytes] : amd.blobs) put(d, bytes);
  json top = amd.manifest_descriptor;
  if (o.manifest_list) {
    ImageSpec decoy = img;
    decoy.layers.resize(1);
    decoy.layers[0] = LayerSpec{};
    decoy.layers[0].file("/arm64-only", "decoy");
    OciBlobs arm = oci_blobs(decoy, o.compression, "arm64");
    for (const auto& [d, bytes] : arm.blobs) put(d, bytes);
    json list = {{"schemaVersion", 2},
                 {"mediaType", "application/vnd.oci.image.index.v1+json"},
                 {"manifests", {arm.manifest_descriptor, amd.manifest_descriptor}}};
    std::string lb = list.dump();
    put(sha256_digest(lb), lb);
    top = descriptor("application/vnd.oci.image.index.v1+json", lb);
  } else {
    top.erase("platform");
  }
  top["annotations"] = {{"org.opencontainers.image.ref.name", tag_part(img.tag)}};
  write_bytes(dir + "/index.json", json{{"schemaVersion", 2}, {"manifests", {top}}}.dump());
  write_bytes(dir + "/oci-layout", R"({"imageLayoutVersion":"1.0.0"})");
}

void write_rootfs(const ImageSpec& img, const std::string& dir) {
  fs::create_directories(dir);
  for (const auto& l : img.layers) {
    for (const auto& s : l.entries) {  // whiteouts hide lower layers only: apply them first
      const std::string& p = s.entry.path;
      std::string name = p.substr(p.rfind('/') + 1);
      if (name == ".wh..wh..opq") {
        std::error_code ec;
        for (const auto& c : fs::directory_iterator(dir + parent_of(p), ec)) fs::remove_all(c.path());
      } else if (name.starts_with(".wh.")) {
        std::error_code ec;  // nothing there, or a file where a directory would be: it hides nothing
        fs::remove_all(dir + parent_of(p) + "/" + name.substr(4), ec);
      }
    }
    for (const auto& s : l.entries) {
      const Entry& e = s.entry;
      if (e.path.substr(e.path.rfind('/') + 1).starts_with(".wh.")) continue;
      const std::string target = dir + e.path;
      fs::create_directories(parent_of(target));
      std::error_code ec;
      auto st = fs::symlink_status(target, ec);
      bool exists = fs::exists(st);
      if (exists && !(e.type == EntryType::Dir && fs::is_directory(st))) fs::remove_all(target);
      switch (e.type) {
        case EntryType::Dir: fs::create_directories(target); break;
        case EntryType::File: write_bytes(target, s.data); break;
        case EntryType::Symlink: fs::create_symlink(e.link_target, target); break;
        case EntryType::Hardlink: fs::create_hard_link(dir + e.link_target, target); break;
        case EntryType::Fifo:
          if (mkfifo(target.c_str(), e.mode) != 0) fail("mkfifo " + target);
          break;
        default: fail("write_rootfs cannot create device nodes or sockets: " + e.path);
      }
      if (e.type != EntryType::Symlink && e.type != EntryType::Hardlink) chmod(target.c_str(), e.mode);
    }
  }
}

namespace {

class MemorySource : public ImageSource {
 public:
  explicit MemorySource(ImageSpec img) : img_(std::move(img)) {}
  ImageDescription describe() override {
    ImageDescription d;
    d.reference = "memory:" + img_.tag;
    d.kind = "memory";
    d.has_config = true;
    d.config = img_.config;
    for (size_t i = 0; i < img_.layers.size(); ++i) d.layers.push_back("layer" + std::to_string(i));
    return d;
  }
  void walk(LayerVisitor& v) override {
    for (size_t i = 0; i < img_.layers.size(); ++i) {
      const std::string id = "layer" + std::to_string(i);
      v.begin_layer(id, i);
      for (const auto& s : img_.layers[i].entries) {
        Entry e = s.entry;
        e.layer = id;
        if (v.entry(e) && e.type == EntryType::File) {
          StringSource r(s.data);
          v.content(e, r);
        }
      }
      v.end_layer(id, i);
    }
  }

 private:
  ImageSpec img_;
};

}  // namespace

std::unique_ptr<ImageSource> memory_source(const ImageSpec& img) {
  return std::make_unique<MemorySource>(img);
}

std::string tree_listing(const MergedTree& t, bool with_layers) {
  static const char* kTypes[] = {"file", "dir",     "symlink",  "hardlink",
                                 "fifo", "chardev", "blockdev", "socket"};
  std::ostringstream o;
  auto line = [&](const std::string& path, EntryType type, uint32_t mode, uint64_t size,
                  std::string_view link, uint32_t major, uint32_t minor, std::string_view layer) {
    o << path << ' ' << kTypes[static_cast<int>(type)] << ' ' << std::oct << mode << std::dec << ' ' << size;
    if (!link.empty()) o << " ->" << link;
    if (type == EntryType::CharDev || type == EntryType::BlockDev) o << ' ' << major << ':' << minor;
    if (with_layers) o << " @" << layer;
  };
  for (const auto& path : t.paths()) {
    if (path == "/") continue;  // root metadata differs by kind (a rootfs dir's mode is the host's)
    TreeEntry e = *t.lookup(path);
    // Which name of a hard-linked file holds the bytes differs by kind (tar
    // order, sorted directory order): list every name as the file itself.
    auto target = e.type == EntryType::Hardlink ? t.lookup(e.link_target) : std::nullopt;
    if (target && !with_layers) e = *target;
    line(path, e.type, e.mode, e.size, e.link_target, e.rdev_major, e.rdev_minor, e.layer);
    if (auto c = t.captured.find(path); c != t.captured.end()) o << ' ' << c->second.dump();
    o << '\n';
  }
  if (with_layers) {
    o << "removed:\n";
    for (const auto& e : t.removed()) {
      line(e.path, e.type, e.mode, e.size, e.link_target, e.rdev_major, e.rdev_minor, e.layer);
      o << " by " << e.removed_by << '\n';
    }
  }
  return o.str();
}

nlohmann::json capture_all(const Entry&, ContentReader& r) {
  std::string s;
  char buf[65536];
  while (size_t n = r.read(buf, sizeof buf)) s.append(buf, n);
  return s;
}

TempDir::TempDir() {
  const char* base = std::getenv("TMPDIR");
  std::string tmpl = std::string(base && *base ? base : "/tmp") + "/trainimg-test-XXXXXX";
  if (!mkdtemp(tmpl.data())) fail("mkdtemp " + tmpl);
  path_ = tmpl;
}

TempDir::~TempDir() {
  std::error_code ec;
  fs::remove_all(path_, ec);
}

void write_bytes(const std::string& path, const std::string& data) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f.write(data.data(), static_cast<std::streamsize>(data.size()));
  if (!f) fail("cannot write " + path);
}

std::string read_bytes(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) fail("cannot read " + path);
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

}  // namespace trainimg::inspect::testing
