// SPDX-License-Identifier: GPL-3.0-or-later
// The one image-source interface. Every kind of image (docker archive, OCI
// layout, dockerd, squashfs, unpacked rootfs) is walked the same way: layer by
// layer, lowest first, each entry offered to a visitor which says whether it
// wants the file's bytes. Nothing is mounted, nothing is run, and data nobody
// asked for is skipped (seeked over where the format allows).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace trainimg::inspect {

enum class EntryType : uint8_t { File, Dir, Symlink, Hardlink, Fifo, CharDev, BlockDev, Socket };

/// One entry as a layer stores it. Whiteouts (`.wh.NAME`, `.wh..wh..opq`)
/// are passed through verbatim by layered sources; build_tree() applies them.
struct Entry {
  std::string path;  ///< absolute and normalised: "/usr/lib/x" ("/" for the root)
  EntryType type = EntryType::File;
  uint32_t mode = 0;  ///< permission bits incl. setuid/setgid/sticky (no type bits)
  uint32_t uid = 0, gid = 0;
  uint64_t size = 0;  ///< regular files only
  int64_t mtime = 0;
  uint32_t rdev_major = 0, rdev_minor = 0;
  std::string link_target;  ///< symlink target verbatim, or hard-link target path (normalised)
  std::map<std::string, std::string> xattrs;
  std::string layer;  ///< layer id (e.g. "sha256:…"), "squashfs" or "dir"
};

/// Sequential access to one file's bytes. read() returns 0 at the end and
/// throws trainimg::Error naming the image and entry on corrupt data.
class ContentReader {
 public:
  virtual ~ContentReader() = default;
  virtual size_t read(char* buf, size_t n) = 0;
  /// Skips n bytes (seeks where possible); returns bytes skipped.
  virtual uint64_t skip(uint64_t n);
};

class LayerVisitor {
 public:
  virtual ~LayerVisitor() = default;
  /// Called before the walk by sources that know how many entries they hold
  /// (a squashfs super block's inode count): a hint for sizing, never a limit.
  virtual void expect_entries(uint64_t n) { (void)n; }
  virtual void begin_layer(const std::string& layer_id, size_t index) {
    (void)layer_id;
    (void)index;
  }
  /// Called for every entry. Return true to receive content() for a regular file.
  virtual bool entry(const Entry& e) = 0;
  /// Asked, before entry() and out of layer order, by sources that meet
  /// layers before they know their order (a docker archive streamed from
  /// dockerd, whose manifest.json comes last): would entry() want this
  /// regular file's bytes? Such sources keep the bytes of the files this
  /// says yes to, then replay the layers in order. It must not depend on
  /// earlier entries. The default (every regular file) is correct but keeps
  /// every file's bytes; build_tree() answers with its WantFn.
  virtual bool may_want(const Entry& e) { return e.type == EntryType::File; }
  virtual void content(const Entry& e, ContentReader& r) {
    (void)e;
    (void)r;
  }
  virtual void end_layer(const std::string& layer_id, size_t index) {
    (void)layer_id;
    (void)index;
  }
};

/// The image config (docker/OCI `config`), or what a .sqsh records of it
/// (`/etc/environment`, `/etc/rc`).
struct ImageConfig {
  std::vector<std::string> env;  ///< KEY=VALUE, image order
  std::vector<std::string> entrypoint, cmd;
  std::string workdir;
  std::string user;
  std::map<std::string, std::string> labels;
  std::vector<std::string> volumes;
  std::string architecture, os;
};

struct ImageDescription {
  std::string reference;  ///< what the user typed, e.g. "docker-archive:img.tar"
  std::string kind;       ///< "docker-archive", "oci", "dockerd", "sqsh", "dir"
  std::string digest;     ///< manifest digest when known
  std::string config_digest;
  bool has_config = false;  ///< false for dir:/sqsh (env may come from /etc/environment)
  ImageConfig config;
  std::vector<std::string> layers;  ///< layer ids, lowest first
};

/// Lists directories on demand, after a walk: what a random-access image (a
/// squashfs file) offers so that the merged view need not keep every entry.
class DirLister {
 public:
  virtual ~DirLister() = default;
  /// The direct children of directory `dir` (normalised, symlinks not
  /// followed) exactly as the walk offered them (hard links included, no
  /// whiteouts), in any order; empty when missing or not a directory.
  /// Throws trainimg::Error on corrupt input.
  virtual std::vector<Entry> list(const std::string& dir) = 0;
};

class ImageSource {
 public:
  virtual ~ImageSource() = default;
  virtual ImageDescription describe() = 0;
  /// One pass over every layer, lowest first. Throws trainimg::Error on
  /// corrupt or hostile input (naming the input and the entry/offset).
  virtual void walk(LayerVisitor& v) = 0;
  /// Single-layer sources with random access return a lister, valid after
  /// walk() and for as long as anyone holds it; others return null.
  virtual std::shared_ptr<DirLister> lister() { return nullptr; }
};

/// Opens "docker-archive:PATH", "oci:DIR[:TAG]", "dockerd://IMAGE[:TAG]",
/// "sqsh:PATH", "dir:PATH", or a bare path (probed: squashfs magic, tar with
/// manifest.json, OCI layout dir, plain dir). Throws Error for unknown kinds.
std::unique_ptr<ImageSource> open_source(const std::string& uri);

}  // namespace trainimg::inspect
