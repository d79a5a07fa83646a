// SPDX-License-Identifier: GPL-3.0-or-later
// trainimg inspect: read an image without running it, gather the facts of
// its EFA/NCCL/MPI stack (inspect/facts/), judge them with the image rules of
// domain.md §6 (inspect/rules/) against what the host runs, and report.
//
// The one header other folders include for images (the host library has its
// own: inspect/host.h). It declares, in this order:
//   - the image-source interface and open_source() (inspect/source.cc and
//     inspect/sources/);
//   - the pieces of the layer-tar reader and config parser that other image
//     sources (builder/import's `docker export` source) reuse;
//   - registry options, manifest digests and the blob cache
//     (inspect/registry/, inspect/sources/registry_source.cc);
//   - the Docker Engine API client (inspect/engine/);
//   - expectations, the image rules and the report (inspect/expect.cc,
//     inspect/rules/, inspect/inspect.cc).
// Everything else under inspect/ is internal to the library.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/diagnostic.h"
#include "common/fd.h"
#include "common/report.h"
#include "common/shared_dir.h"

namespace trainimg::host {
struct HostProfile;  // inspect/host.h
}  // namespace trainimg::host

namespace trainimg::inspect {

namespace facts {
struct ImageFacts;  // inspect/facts/facts.h
}  // namespace facts

// ------------------------------------------------------------ image sources
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
  /// The next bytes, without a copy where the reader already holds them in
  /// memory: a view valid until the next call on this reader, empty at the
  /// end. The default reads into `scratch` (never more than its size).
  virtual std::string_view read_view(std::span<char> scratch);
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

/// "/a/./b/../c" -> "/a/c"; never above "/". Used for tar names too.
std::string normalize_path(const std::string& p);

// --------------------------------------------- layer tars and image configs
/// Where a layer's (or an archive's) bytes come from. read() returns 0 at
/// the end and throws trainimg::Error on failure.
class ByteSource {
 public:
  virtual ~ByteSource() = default;
  virtual size_t read(char* buf, size_t n) = 0;
  /// Skips up to n bytes and returns how many were skipped; the default
  /// reads and drops. Seekable sources override it with a seek.
  virtual uint64_t skip(uint64_t n);
  virtual bool seekable() const { return false; }
  /// As ContentReader::read_view: a view valid until the next call, empty
  /// at the end; the default reads into `scratch`.
  virtual std::string_view read_view(std::span<char> scratch);
};

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
void walk_layer_tar(ByteSource& in, const LayerInput& where, LayerVisitor& v);

struct ParsedConfig {
  ImageConfig config;
  std::vector<std::string> diff_ids;  ///< rootfs.diff_ids, lowest layer first
};

/// Reads a docker/OCI image config's `config` (Env, Entrypoint, Cmd,
/// WorkingDir, User, Labels, Volumes), architecture, os and
/// rootfs.diff_ids. Throws Error naming `file`/`what` when a field has the
/// wrong JSON type.
ParsedConfig parse_image_config(const nlohmann::json& j, const std::string& file, const std::string& what);

// ------------------------------------------------------ registry and digests

/// The digest of the image manifest `ref` (what follows "docker://") names
/// for the platform in force (through a manifest list / OCI index),
/// fetching manifests only: no config, no layer. Pinned and cached
/// manifests are read offline. Throws trainimg::Error naming the registry,
/// the repository, and the HTTP status or the digest.
std::string resolve_registry_digest(const std::string& ref, const SourceOptions& opt = {});

/// "sha256:<hex>" of `data`.
std::string sha256_digest(std::string_view data);

/// "sha256:<hex>" of the whole file at `path` (read once, front to back);
/// throws Error naming it when it cannot be read.
std::string sha256_file(const std::string& path);

/// True for "sha256:" followed by exactly 64 lowercase hex digits: the only
/// digests accepted as blob names, so a digest can never name a path such as
/// "sha256:../../etc/passwd".
bool is_sha256_digest(std::string_view d);

// The content-addressed blob cache of registry sources: DIR/blobs/sha256/HEX,
// written as DIR/tmp/HEX.PID.partial and renamed into place only after the
// fill verified it (digest and size), so a blob is never visible half
// written or unverified. One flock per digest (DIR/locks/HEX.lock, see
// PathLock) makes concurrent processes, on one node or many sharing DIR,
// download a blob once; a lock dies with its process, so a killed download
// blocks nobody. A failed fill removes its lock file too: after a digest
// mismatch no file named after that digest is left. Hits take no lock.
// Every hit refreshes the entry's mtime: prune removes the least recently
// used first, and never an entry whose lock is held.
// Many users, one DIR (mode 1777; common/shared_dir.h): a blob is used only
// from a file owned by the caller, root or an account of
// TRAINIMG_CACHE_TRUST (default: DIR's owner) that nobody else can write;
// those accounts write DIR itself, every other user DIR/user-UID (0700), so
// what one user wrote is never read by another user's import.
namespace registry {

/// TRAINIMG_CACHE, else $XDG_CACHE_HOME/trainimg, else ~/.cache/trainimg.
std::string default_cache_dir();

/// An flock(2) on a lock file that its exclusive holder may unlink: after
/// locking, the path is checked to still name the locked file (else the
/// lock is taken again on the new one), so a waiter never holds a lock on a
/// removed file while another process locks its replacement. The lock dies
/// with its process (and, on a cluster file system mounted with flock
/// support, with its node).
class PathLock {
 public:
  PathLock() = default;
  /// Blocks until held; `on_wait(seconds)` is called about once a second
  /// while another process holds it. Creates the file (mode 0666 less the
  /// umask; opened read-only when another user owns it).
  static PathLock acquire(const std::string& path, bool shared,
                          const std::function<void(unsigned waited_s)>& on_wait = {});
  /// Held at once, or an unheld lock.
  static PathLock try_acquire(const std::string& path, bool shared);
  bool held() const { return static_cast<bool>(fd_); }
  /// Unlinks the lock file (exclusive holders only), then releases.
  void remove();
  void release() { fd_.reset(); }

 private:
  static PathLock take(const std::string& path, bool shared, bool wait,
                       const std::function<void(unsigned)>& on_wait);
  std::string path_;
  UniqueFd fd_;
};

/// mkdir -p with `mode` for each directory it creates (chmod'ed, so the
/// umask does not narrow 01777).
void make_dirs(const std::string& path, unsigned mode = 0755);

struct CacheEntry {
  std::string digest;  ///< "sha256:…"
  uint64_t size = 0;
  int64_t last_used = 0;  ///< seconds since the epoch (the file's mtime)
  std::string area;       ///< DIR, or DIR/user-UID
};

struct PruneResult {
  uint64_t removed = 0, removed_bytes = 0;
  uint64_t kept = 0, kept_bytes = 0;
  uint64_t busy = 0;  ///< entries skipped because another process holds their lock
};

class BlobCache {
 public:
  /// `dir` empty: no cache at all (blobs go to unnamed temporary files).
  /// Throws Error when others can write `dir` without the sticky bit, or
  /// TRAINIMG_CACHE_TRUST is malformed.
  explicit BlobCache(std::string dir);
  bool enabled() const { return !dir_.empty(); }
  const std::string& dir() const { return dir_; }
  /// Where this caller writes: dir(), or its own area DIR/user-UID.
  const std::string& write_dir() const { return write_dir_; }

  /// The published blob, or an invalid fd when it is not cached.
  UniqueFd open(const std::string& digest) const;

  /// The blob, from the cache or made by `fill(fd)`, which writes it into
  /// the (empty, writable) fd and throws when it cannot be verified; nothing
  /// is then left under any name. Returns a read-only fd positioned at 0.
  UniqueFd get(const std::string& digest, const std::function<void(int fd)>& fill) const;

  std::vector<CacheEntry> list() const;
  /// Removes entries least recently used first: those older than
  /// `older_than_s`, then more until the total is at most `max_size`.
  PruneResult prune(std::optional<uint64_t> max_size, std::optional<int64_t> older_than_s) const;

 private:
  std::string blob_path(const std::string& area, const std::string& digest) const;
  std::vector<std::string> areas() const;
  std::string dir_, write_dir_;
  std::optional<Trust> trust_;
};

/// "7d", "12h", "30m", "45s" -> seconds; nullopt when malformed.
std::optional<int64_t> parse_duration(const std::string& s);

}  // namespace registry

// ----------------------------------------------------- Docker Engine client
// A small Docker Engine API client: libcurl over the daemon's unix socket
// (domain.md §5). No `docker` CLI, no temporary files: responses are either
// pushed to a sink (get/post) or pulled (open), and in both cases curl is not
// asked for more bytes until the consumer has taken the previous ones, so a
// slow consumer throttles the daemon instead of growing a buffer.
//
// Every failure is a trainimg::Error whose file is the endpoint
// ("unix:///var/run/docker.sock"), and whose message names the request, the
// HTTP status and the daemon's own text (its JSON {"message": …}), e.g.
//   GET /images/nope/json: HTTP 404: No such image: nope:latest
// A daemon that is not there, or a connection dropped mid-stream, is reported
// as such, with the byte count received so far.
namespace engine {

/// Receives response bytes in order; may throw (the transfer is then aborted
/// and the exception rethrown from the Engine call).
using Sink = std::function<void(std::string_view)>;
/// Fills up to `n` bytes of a request body; returns 0 at the end. May throw.
using BodySource = std::function<size_t(char* buf, size_t n)>;

/// The highest Engine API version this client speaks; the session uses the
/// lower of this and the daemon's.
inline constexpr std::string_view kClientApiVersion = "1.43";
/// The lowest daemon API version accepted (POST /build `networkmode`, `target`).
inline constexpr std::string_view kMinApiVersion = "1.25";

/// Where the daemon listens: DOCKER_HOST=unix:///path, else
/// /var/run/docker.sock. Throws Error for a DOCKER_HOST this client cannot use
/// (tcp://, ssh://, …) rather than silently ignoring it.
std::string socket_path_from_env();

/// Percent-encodes a query value or path segment (RFC 3986 unreserved kept).
std::string url_escape(std::string_view s);

/// A response being read by the caller (pull). Created by Engine::open.
/// read() throws Error for an HTTP error status (with the daemon's message)
/// or a transfer failure; it returns 0 only after a complete response.
class Stream {
 public:
  virtual ~Stream() = default;
  virtual size_t read(char* buf, size_t n) = 0;
  /// Bytes of body delivered so far.
  virtual uint64_t bytes_read() const = 0;
};

class Engine {
 public:
  /// Connects to socket_path_from_env() and negotiates the API version with
  /// GET /_ping (Api-Version header), falling back to GET /version. Throws
  /// Error when the daemon cannot be reached or is too old.
  static Engine connect();
  /// The same for an explicit socket path.
  static Engine connect(const std::string& socket_path);

  /// The negotiated version, e.g. "1.41"; request paths are sent as /vX.Y/path.
  const std::string& api_version() const { return api_version_; }
  const std::string& socket_path() const { return socket_path_; }
  /// "unix:///var/run/docker.sock": the `file` of every Error this throws.
  std::string endpoint() const { return "unix://" + socket_path_; }

  /// GET `path` (e.g. "/images/x/json", query included) and parse the JSON body.
  nlohmann::json get_json(const std::string& path) const;
  /// GET `path`, streaming the body to `sink` as it arrives.
  void get(const std::string& path, const Sink& sink) const;
  /// GET `path` as a pull stream (for readers such as libarchive's callbacks).
  std::unique_ptr<Stream> open(const std::string& path) const;
  /// POST `path` with a body streamed from `body` (chunked; no length needed)
  /// and extra `headers` ("Content-Type: application/x-tar"); the response is
  /// streamed to `sink`. An exception thrown by `body` or `sink` aborts the
  /// transfer and is rethrown here.
  void post(const std::string& path, const BodySource& body, const std::vector<std::string>& headers,
            const Sink& sink) const;
  /// POST /images/load?quiet=1 with a docker archive (`docker save` output)
  /// streamed from `tar`. Returns what the daemon says it loaded, one entry
  /// per "Loaded image: NAME" or "Loaded image ID: sha256:…" line. An error
  /// the daemon reports inside its 200 answer (it may start answering before
  /// the archive is read) is thrown as an Error too.
  std::vector<std::string> load(const BodySource& tar) const;
  /// DELETE /images/{name}?force=1: removes the tag `name` (and the image
  /// when no other tag holds it, even if a stopped container uses it).
  void remove_image(const std::string& name) const;

 private:
  Engine(std::string socket_path, std::string api_version)
      : socket_path_(std::move(socket_path)), api_version_(std::move(api_version)) {}
  std::string socket_path_;
  std::string api_version_;
};

}  // namespace engine

// ------------------------------------------------ expectations and reports
/// What the image must match: from `--expect` and/or `--host HOST.json`.
struct Expectations {
  std::optional<std::string> efa_installer, libfabric, aws_ofi_nccl, cuda_driver;
  /// Where each came from, for messages: "--expect" or the profile's path.
  std::string efa_installer_from, libfabric_from, aws_ofi_nccl_from, cuda_driver_from;
};

/// Parses "efa-installer=1.50.0,libfabric=2.6.0,aws-ofi-nccl=1.21.1,cuda-driver=13.2".
/// Throws trainimg::Error (naming --expect and the column) on an unknown key,
/// a missing '=', an empty or non-version value, or a repeated key.
Expectations parse_expect(const std::string& spec);

/// The host profile's EFA installer, libfabric, aws-ofi-nccl and CUDA driver
/// versions (absent facts stay unset).
Expectations expectations_from_host(const host::HostProfile& p, const std::string& file);

/// `over` wins where it sets a value.
Expectations merge(Expectations base, const Expectations& over);

/// Every image rule, in catalogue order (domain "image").
std::vector<RuleInfo> image_rules();

/// Runs every image rule; findings in rule order.
std::vector<Diagnostic> check_image(const facts::ImageFacts& f, const Expectations& e);

/// The facts as the `facts` object of trainimg.inspect/v1 (stable order),
/// every field of the facts included, and "facts_version": kFactsVersion.
nlohmann::ordered_json facts_json(const facts::ImageFacts& f);
/// Raised when facts_json changes what it writes (keys only added).
inline constexpr int kFactsVersion = 1;
/// The inverse of facts_json (a sidecar keeps the facts for the job-start
/// gate). The input may be hostile, so it is read strictly: it must be
/// exactly what facts_json writes for some facts of kFactsVersion (every
/// key, no other, each of its type, the derived values agreeing). Else
/// throws trainimg::Error, file `what`, one line naming the key, e.g.
/// "facts/loader_order/0/candidates: expected an array, not string"; facts
/// without facts_version (an older trainimg) are refused that way too.
facts::ImageFacts facts_from_json(const nlohmann::ordered_json& j, const std::string& what);
/// make_report(facts_from_json(j, what), e): the rules judged on recorded
/// facts, without reading the image. Throws as facts_from_json.
Report report_from_facts_json(const nlohmann::ordered_json& j, const Expectations& e,
                              const std::string& what);
/// The facts as the text report's table rows.
std::vector<std::pair<std::string, std::string>> facts_rows(const facts::ImageFacts& f);

/// Opens `uri`, gathers the facts, runs the rules: the whole report.
/// Throws trainimg::Error for unreadable or hostile input.
Report inspect_image(const std::string& uri, const Expectations& e, const SourceOptions& opt = {});
/// The report for facts already gathered.
Report make_report(const facts::ImageFacts& f, const Expectations& e);

}  // namespace trainimg::inspect
