// SPDX-License-Identifier: GPL-3.0-or-later
// The image-source interface: one pass over an image's layers, entry by
// entry, whatever holds the image (docker archive, OCI layout, dockerd,
// registry, squashfs file, directory). open_source() is in inspect/source.cc,
// the sources themselves in inspect/sources/, normalize_path() in
// inspect/tree.cc and with_defaults() in inspect/sources/registry_source.cc.
// The one reader interface of the library (ContentReader) is declared here:
// the layer tar reader (inspect/sources/tar.h) takes the same one.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
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

/// Sequential access to bytes: a file's content handed to
/// LayerVisitor::content(), or a layer tar or archive member fed to
/// walk_layer_tar() (inspect/sources/tar.h). read() returns 0 at the end and
/// throws trainimg::Error naming the input (the image and entry, the layer)
/// on corrupt data or failure.
class ContentReader {
 public:
  virtual ~ContentReader() = default;
  virtual size_t read(char* buf, size_t n) = 0;
  /// Skips up to n bytes and returns how many were skipped; the default
  /// reads and drops. Readers that can seek override it with a seek.
  virtual uint64_t skip(uint64_t n);
  /// True when skip() seeks instead of reading: the tar reader then lets
  /// libarchive skip unwanted data of uncompressed tars.
  virtual bool seekable() const { return false; }
  /// The next bytes, without a copy where the reader already holds them in
  /// memory: a view valid until the next call on this reader, empty at the
  /// end. The default reads into `scratch` (never more than its size).
  virtual std::string_view read_view(std::span<char> scratch);
  /// `n` bytes read from this reader were read ahead of what its consumer
  /// used (inspect/sources/inflate_ahead.h): a reader that checks what is
  /// left after the consumer's end (HashingSource) counts them as left.
  virtual void unread(uint64_t n) { (void)n; }
};

class LayerVisitor {
 public:
  virtual ~LayerVisitor() = default;
  /// Called before the walk by sources that know how many entries they hold
  /// (a squashfs super block's inode count): a hint for sizing, never a limit.
  virtual void expect_entries(uint64_t n) { (void)n; }
  /// Asked once per layer before the walk starts, lowest first: false, and
  /// sources that can skip a layer (registries, OCI layouts, docker
  /// archives) neither fetch nor read it. Others still walk it: a visitor
  /// that says false must ignore what comes of that layer.
  virtual bool want_layer(const std::string& layer_id, size_t index) {
    (void)layer_id;
    (void)index;
    return true;
  }
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
  std::vector<std::string> layers;    ///< layer ids, lowest first
  std::vector<uint64_t> layer_bytes;  ///< each layer's blob size, where the source knows it (else empty)
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

/// Layer blobs a source fetches: what is ready (downloaded and verified, or
/// found in the cache) of the whole.
struct TransferProgress {
  uint64_t bytes = 0, total_bytes = 0;
  size_t blobs = 0, total_blobs = 0;
};
using TransferFn = std::function<void(const TransferProgress&)>;

class ImageSource {
 public:
  virtual ~ImageSource() = default;
  virtual ImageDescription describe() = 0;
  /// One pass over every layer, lowest first. Throws trainimg::Error on
  /// corrupt or hostile input (naming the input and the entry/offset).
  virtual void walk(LayerVisitor& v) = 0;
  /// Whether walk_layer(i) can read layer i now: its bytes are at hand on
  /// their own (an OCI layout's blob, a docker archive's member, a registry
  /// blob an earlier walk fetched). False by default.
  virtual bool can_walk_layer(size_t i) const {
    (void)i;
    return false;
  }
  /// Starts fetching the layers `want` names (a registry's downloads, up to
  /// its connection limit, lowest first) and returns true: can_walk_layer()
  /// is then true for each of them, and walk_layer() reads one while it
  /// still arrives, waiting for its bytes (a digest or size mismatch ends
  /// that walk with the error). False, the default, where there is nothing
  /// to fetch or the source cannot.
  virtual bool fetch_layers(const std::vector<bool>& want) {
    (void)want;
    return false;
  }
  /// walk() of layer i alone: begin_layer, its entries, end_layer
  /// (want_layer is not asked), the same entries in the same order and with
  /// the same checks. Safe to call from several threads at once, each for
  /// another layer, where can_walk_layer(i) said true; throws Error otherwise.
  virtual void walk_layer(size_t i, LayerVisitor& v);
  /// Single-layer sources with random access return a lister, valid after
  /// walk() and for as long as anyone holds it; others return null.
  virtual std::shared_ptr<DirLister> lister() { return nullptr; }
  /// Sources that download their layers (registries) report them through
  /// `fn` while walk() runs, from their download threads, one call at a
  /// time and in order; local sources never call it.
  virtual void on_transfer(TransferFn fn) { (void)fn; }
};

/// How registry sources (`docker://REFERENCE`) fetch: passed to
/// open_source() (cmd/ fills it from --platform, --cache, …); the
/// environment fills what is left empty (with_defaults()).
struct SourceOptions {
  std::string cache_dir;  ///< blob cache (default: registry::default_cache_dir())
  bool no_cache = false;  ///< write nothing to any cache (blobs in unnamed temporary files)
  std::string platform;   ///< os/arch[/variant] from an index; empty: TRAINIMG_PLATFORM, else the host's
  unsigned max_connections = 0;  ///< blobs in flight; 0: ENROOT_MAX_CONNECTIONS, else 10
};
/// `o` with the defaults filled in: the blob cache directory,
/// TRAINIMG_PLATFORM else the host's platform, ENROOT_MAX_CONNECTIONS else 10.
SourceOptions with_defaults(SourceOptions o);

/// Opens "docker-archive:PATH", "oci:DIR[:TAG]", "dockerd://IMAGE[:TAG]",
/// "sqsh:PATH", "dir:PATH", or a bare path (probed: squashfs magic, tar with
/// manifest.json, OCI layout dir, plain dir), or "docker://REFERENCE"
/// (fetched as `opt` says). Throws Error for unknown kinds.
std::unique_ptr<ImageSource> open_source(const std::string& uri, const SourceOptions& opt = {});

/// The digest of the image manifest `ref` (what follows "docker://") names
/// for the platform in force (through a manifest list / OCI index),
/// fetching manifests only: no config, no layer. Pinned and cached
/// manifests are read offline. Throws trainimg::Error naming the registry,
/// the repository, and the HTTP status or the digest.
std::string resolve_registry_digest(const std::string& ref, const SourceOptions& opt = {});

/// "/a/./b/../c" -> "/a/c"; never above "/". Used for tar names too.
std::string normalize_path(const std::string& p);
/// True when normalize_path(p) == p, found without building it.
bool is_normalized_path(std::string_view p);

}  // namespace trainimg::inspect
