// SPDX-License-Identifier: GPL-3.0-or-later
#include "inspect/sources/registry_source.h"

#include <fcntl.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <thread>

#include "common/cpu_slots.h"
#include "common/cpus.h"
#include "common/error.h"
#include "common/fd.h"
#include "common/sha256.h"
#include "inspect/registry/client.h"
#include "inspect/registry/registry.h"
#include "inspect/sources/image_config.h"
#include "inspect/sources/source.h"
#include "inspect/sources/tar.h"
#include "inspect/sources/tar_layer.h"

namespace trainimg::inspect {
namespace {

using nlohmann::json;
using registry::BlobCache;
using registry::Client;
using registry::Reference;

constexpr uint64_t kMaxJsonBlob = 16 << 20;
constexpr int kMaxIndexDepth = 4;
constexpr uint64_t kReportEvery = 32u << 20;  ///< on_transfer calls: every 32 MiB and per blob
constexpr uint64_t kFlushEvery = 32u << 20;   ///< write-back started for every 32 MiB received

void write_all(int fd, std::string_view data, const std::string& what) {
  while (!data.empty()) {
    ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw_errno(what, "write");
    data.remove_prefix(static_cast<size_t>(n));
  }
}

void pwrite_all(int fd, std::string_view data, uint64_t off, const std::string& what) {
  while (!data.empty()) {
    ssize_t n = ::pwrite(fd, data.data(), data.size(), static_cast<off_t>(off));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw_errno(what, "write");
    data.remove_prefix(static_cast<size_t>(n));
    off += static_cast<uint64_t>(n);
  }
}

// True when the file holds exactly `data` at `off`.
bool same_bytes(int fd, std::string_view data, uint64_t off, const std::string& what) {
  char buf[64 * 1024];
  while (!data.empty()) {
    const size_t want = std::min(data.size(), sizeof buf);
    ssize_t n = pread_full(fd, buf, want, off);
    if (n < 0) throw_errno(what, "read");
    if (static_cast<size_t>(n) != want || std::memcmp(buf, data.data(), want) != 0) return false;
    data.remove_prefix(want);
    off += want;
  }
  return true;
}

std::string read_fd(int fd, uint64_t size, const std::string& what) {
  std::string out(size, '\0');
  ssize_t n = pread_full(fd, out.data(), out.size(), 0);
  if (n < 0) throw_errno(what, "read");
  if (static_cast<size_t>(n) != out.size()) throw Error(what, "truncated");
  return out;
}

// Forwards to a visitor and tells whether an exception came from it rather
// than from reading the layer (its ContentReader).
class Blame : public LayerVisitor {
 public:
  explicit Blame(LayerVisitor& v) : v_(v) {}
  bool visitor_threw = false;

  void expect_entries(uint64_t n) override {
    guard([&] { v_.expect_entries(n); });
  }
  void begin_layer(const std::string& id, size_t index) override {
    guard([&] { v_.begin_layer(id, index); });
  }
  bool entry(const Entry& e) override {
    bool want = false;
    guard([&] { want = v_.entry(e); });
    return want;
  }
  bool may_want(const Entry& e) override {
    bool want = false;
    guard([&] { want = v_.may_want(e); });
    return want;
  }
  void content(const Entry& e, ContentReader& r) override {
    Reader in(r);
    try {
      v_.content(e, in);
    } catch (...) {
      if (!in.threw) visitor_threw = true;
      throw;
    }
  }
  void end_layer(const std::string& id, size_t index) override {
    guard([&] { v_.end_layer(id, index); });
  }

 private:
  class Reader : public ContentReader {
   public:
    explicit Reader(ContentReader& in) : in_(in) {}
    bool threw = false;
    size_t read(char* buf, size_t n) override {
      try {
        return in_.read(buf, n);
      } catch (...) {
        threw = true;
        throw;
      }
    }
    uint64_t skip(uint64_t n) override {
      try {
        return in_.skip(n);
      } catch (...) {
        threw = true;
        throw;
      }
    }

   private:
    ContentReader& in_;
  };

  template <class F>
  void guard(F&& f) {
    try {
      f();
    } catch (...) {
      visitor_threw = true;
      throw;
    }
  }

  LayerVisitor& v_;
};

class RegistrySource : public ImageSource {
 public:
  RegistrySource(Reference ref, std::string uri, SourceOptions opt)
      : ref_(ref), uri_(std::move(uri)), opt_(std::move(opt)), client_(ref), cache_(opt_.cache_dir) {}

  ~RegistrySource() override { stop_downloads(); }

  void load() {
    std::string digest;
    json j = resolve(digest);
    load_manifest(j, digest);
  }

  // The image manifest for the platform (through indexes), and its digest.
  json resolve(std::string& digest) {
    std::string body, media_type;
    fetch_manifest(ref_.manifest_ref(), body, media_type, digest);
    for (int depth = 0;; ++depth) {
      json j = parse_json(body, name(), "manifest " + digest);
      if (!j.is_object()) throw Error(name(), "manifest " + digest + ": not a JSON object");
      if (j.contains("schemaVersion") && j["schemaVersion"] == 1)
        throw Error(name(), "manifest " + digest + " is Docker schema 1, which is not supported",
                    "push the image again with a current client (schema 2 or OCI)");
      if (media_type.empty() || media_type == "application/json" || media_type == "text/plain")
        media_type = json_string_at(j, "/mediaType"_json_pointer, name(), "manifest " + digest);
      if (media_type.empty())
        media_type = j.contains("manifests") ? "application/vnd.oci.image.index.v1+json"
                                             : "application/vnd.oci.image.manifest.v1+json";
      if (media_type == "application/vnd.docker.distribution.manifest.v1+json" ||
          media_type == "application/vnd.docker.distribution.manifest.v1+prettyjws")
        throw Error(name(), "manifest " + digest + " is Docker schema 1, which is not supported",
                    "push the image again with a current client (schema 2 or OCI)");
      if (is_index_media_type(media_type) || j.contains("manifests")) {
        if (depth == kMaxIndexDepth) throw Error(name(), "image indexes nested too deeply");
        Descriptor d = pick_platform(j, digest);
        fetch_manifest(d.digest, body, media_type, digest);
        continue;
      }
      return j;
    }
  }

  ImageDescription describe() override { return desc_; }

  // Layers are read in order while later ones download. A layer still
  // downloading is read as it grows (GrowingBlob); the walk moves on to the
  // next layer only once this one is complete and verified, and a digest or
  // size mismatch anywhere ends the walk with that error, so nothing read
  // from unverified bytes outlives it.
  void walk(LayerVisitor& v) override {
    std::vector<bool> want(layers_.size());
    for (size_t i = 0; i < layers_.size(); ++i) want[i] = v.want_layer(desc_.layers[i], i);
    start_downloads(want);
    struct Stop {  // no download thread outlives the walk (nor calls on_transfer after it)
      RegistrySource& s;
      ~Stop() { s.stop_downloads(); }
    } stop{*this};
    for (size_t i = 0; i < layers_.size(); ++i)
      if (want[i]) walk_fetched(i, v);  // one not wanted is never downloaded either
  }

  bool fetch_layers(const std::vector<bool>& want) override {
    std::vector<bool> w(layers_.size(), false);
    for (size_t i = 0; i < w.size() && i < want.size(); ++i) w[i] = want[i];
    start_downloads(w);  // stopped by the next walk() or the destructor
    std::lock_guard<std::mutex> lock(mu_);
    fetching_ = std::move(w);
    return true;
  }

  // A layer fetch_layers() is fetching, or an earlier walk fetched and
  // verified (import's data pass).
  bool can_walk_layer(size_t i) const override {
    std::lock_guard<std::mutex> lock(mu_);
    return i < fds_.size() && (fds_[i] || (i < fetching_.size() && fetching_[i]));
  }

  void walk_layer(size_t i, LayerVisitor& v) override {
    if (!can_walk_layer(i)) return ImageSource::walk_layer(i, v);
    walk_fetched(i, v);
  }

  void on_transfer(TransferFn fn) override {
    std::lock_guard<std::mutex> lock(mu_);
    transfer_fn_ = std::move(fn);
  }

 private:
  std::string name() const { return uri_; }

  // A manifest by tag or digest: from the cache when pinned and cached (the
  // cache only holds verified blobs), else from the registry (then cached).
  void fetch_manifest(const std::string& r, std::string& body, std::string& media_type, std::string& digest) {
    media_type.clear();
    if (is_sha256_digest(r)) {
      if (UniqueFd fd = cache_.open(r)) {
        struct stat st {};
        if (fstat(fd.get(), &st) == 0 && static_cast<uint64_t>(st.st_size) <= kMaxJsonBlob) {
          body = read_fd(fd.get(), static_cast<uint64_t>(st.st_size), name());
          digest = r;
          if (sha256_digest(body) == r) return;
        }
      }
    }
    registry::FetchedManifest m = client_.get_manifest(r);
    body = std::move(m.body);
    media_type = m.media_type;
    digest = m.digest;
    if (cache_.enabled()) {
      const std::string& b = body;
      cache_.get(digest, [&](int fd) { write_all(fd, b, cache_.dir()); });
    }
  }

  Descriptor descriptor(const json& j, const std::string& where) const {
    return parse_descriptor(j, name(), where);
  }

  Descriptor pick_platform(const json& index, const std::string& digest) const {
    const std::string where = "index " + digest;
    if (!index.contains("manifests") || !index["manifests"].is_array())
      throw Error(name(), where + ": no 'manifests' list");
    std::string want_os, want_arch, want_variant;
    {
      const std::string& p = opt_.platform;
      auto s1 = p.find('/');
      auto s2 = s1 == std::string::npos ? std::string::npos : p.find('/', s1 + 1);
      want_os = p.substr(0, s1);
      want_arch = s1 == std::string::npos
                      ? ""
                      : p.substr(s1 + 1, s2 == std::string::npos ? std::string::npos : s2 - s1 - 1);
      want_variant = s2 == std::string::npos ? "" : p.substr(s2 + 1);
    }
    std::string offered;
    const json* loose = nullptr;
    for (const auto& m : index["manifests"]) {
      std::string os = json_string_at(m, "/platform/os"_json_pointer, name(), where);
      std::string arch = json_string_at(m, "/platform/architecture"_json_pointer, name(), where);
      std::string variant = json_string_at(m, "/platform/variant"_json_pointer, name(), where);
      if (os.empty() || os == "unknown") continue;  // attestations, not images
      std::string shown = os + "/" + arch + (variant.empty() ? "" : "/" + variant);
      offered += (offered.empty() ? "" : ", ") + shown;
      if (os != want_os || arch != want_arch) continue;
      if (variant == want_variant) return descriptor(m, where);
      if (want_variant.empty() && !loose) loose = &m;
    }
    if (loose) return descriptor(*loose, where);
    throw Error(name(),
                where + " has no " + opt_.platform +
                    " image (it offers: " + (offered.empty() ? "none" : offered) + ")",
                "choose one with --platform OS/ARCH[/VARIANT]");
  }

  void load_manifest(const json& manifest, const std::string& digest) {
    const std::string where = "manifest " + digest;
    if (!manifest.contains("config") || !manifest.contains("layers") || !manifest["layers"].is_array())
      throw Error(name(), where + ": not an image manifest (no config or layers)");
    Descriptor config = descriptor(manifest["config"], where);
    if (config.size > kMaxJsonBlob)
      throw Error(name(),
                  "config " + config.digest + ": " + std::to_string(config.size) + " bytes is too large");
    UniqueFd cfd = blob(config);
    auto parsed = parse_image_config(
        parse_json(read_fd(cfd.get(), config.size, name()), name(), "config " + config.digest), name(),
        "config " + config.digest);
    for (const auto& l : manifest["layers"]) {
      Descriptor ld = descriptor(l, where);
      if (!is_layer_media_type(ld.media_type))
        throw Error(name(), "layer " + ld.digest + ": unsupported layer media type '" + ld.media_type + "'");
      layers_.push_back(ld);
    }
    if (!parsed.diff_ids.empty() && parsed.diff_ids.size() != layers_.size())
      throw Error(name(), "config " + config.digest + " lists " + std::to_string(parsed.diff_ids.size()) +
                              " diff_ids but the manifest has " + std::to_string(layers_.size()) + " layers");
    desc_.reference = uri_;
    desc_.kind = "registry";
    desc_.digest = digest;
    desc_.config_digest = config.digest;
    desc_.has_config = true;
    desc_.config = parsed.config;
    for (size_t i = 0; i < layers_.size(); ++i)
      desc_.layers.push_back(i < parsed.diff_ids.size() ? parsed.diff_ids[i] : layers_[i].digest);
    for (const auto& l : layers_) desc_.layer_bytes.push_back(l.size);
    fds_.resize(layers_.size());
    st_.resize(layers_.size());
  }

  // The verified blob: a cache hit, or downloaded, hashed and checked.
  // `layer` (a layer's index, or npos) makes the download readable while it
  // grows: the file's first `avail` bytes never change once announced. When
  // the registry ignores a Range and sends the blob again from its start,
  // the bytes already in the file are compared with the new ones instead of
  // being overwritten (a difference is an error), so what a reader took
  // before the restart is what the digest finally covers.
  UniqueFd blob(const Descriptor& d, size_t layer = std::string::npos) {
    return cache_.get(d.digest, [&](int fd) {
      auto sha = std::make_unique<Sha256>();
      uint64_t n = 0, in_file = 0, reported = 0, flushed = 0;
      const std::string what = "blob " + d.digest;
      if (layer != std::string::npos) {
        std::lock_guard<std::mutex> lock(mu_);
        st_[layer].growing = UniqueFd(::fcntl(fd, F_DUPFD_CLOEXEC, 0));
        if (!st_[layer].growing) throw_errno(what, "dup");
        st_[layer].avail = 0;
      }
      cv_.notify_all();
      auto sink = [&](std::string_view data) {
        if (stop_) throw Error(name(), what + ": download stopped");
        if (n + data.size() > d.size)
          throw Error(name(), what + ": size mismatch: more than the " + std::to_string(d.size) +
                                  " bytes the manifest says (from " + ref_.registry + ")");
        sha->update(data);
        if (n < in_file) {  // a restarted transfer, over bytes already in the file
          std::string_view head =
              data.substr(0, static_cast<size_t>(std::min<uint64_t>(data.size(), in_file - n)));
          if (!same_bytes(fd, head, n, what))
            throw Error(name(),
                        what + ": " + ref_.registry +
                            " sent different bytes when the download started over; nothing was cached");
          n += head.size();
          data.remove_prefix(head.size());
        }
        if (data.empty()) return;
        pwrite_all(fd, data, n, what);
        n += data.size();
        in_file = n;
        if (layer != std::string::npos) {
          {
            std::lock_guard<std::mutex> lock(mu_);
            st_[layer].avail = n;
          }
          cv_.notify_all();
        }
        // The cache syncs the blob before publishing it; start the
        // write-back now so that the sync finds little left to write.
        if (cache_.enabled() && in_file - flushed >= kFlushEvery) {
          ::sync_file_range(fd, static_cast<off_t>(flushed), static_cast<off_t>(in_file - flushed),
                            SYNC_FILE_RANGE_WRITE);
          flushed = in_file;
        }
        if (layer != std::string::npos && in_file - reported >= kReportEvery) {
          transferred(in_file - reported, false);
          reported = in_file;
        }
      };
      auto restart = [&] {
        sha = std::make_unique<Sha256>();
        n = 0;
      };
      client_.get_blob(d.digest, sink, restart);
      if (layer != std::string::npos) {
        std::lock_guard<std::mutex> lock(mu_);
        st_[layer].counted = reported;
      }
      if (n != d.size)
        throw Error(name(), what + ": size mismatch: " + ref_.registry + " sent " + std::to_string(n) +
                                " bytes, the manifest says " + std::to_string(d.size));
      std::string got = sha->digest();
      if (got != d.digest)
        throw Error(name(), what + ": digest mismatch: the content " + ref_.registry + " sent is " + got +
                                "; nothing was cached");
    });
  }

  // Layer i, whose download has started (or is done): read from its
  // verified blob, or while it grows.
  void walk_fetched(size_t i, LayerVisitor& v) {
    LayerInput in{uri_, "blob " + layers_[i].digest, desc_.layers[i], i};
    if (int fd = wait_readable(i); fd >= 0) {
      MappedRange range(fd, 0, layers_[i].size, name());  // verified, never written again
      walk_layer_tar(range, in, v);
      return;
    }
    // Bytes that do not parse may be bytes that will not verify: then
    // the digest mismatch is the error to report, not the parser's.
    // An exception of the visitor's own (an interrupt) is not waited on.
    GrowingBlob growing(*this, i);
    Blame blame(v);
    try {
      walk_layer_tar(growing, in, blame);
    } catch (const Error&) {
      if (!blame.visitor_threw) wait_layer(i);
      throw;
    }
    wait_layer(i);
  }

  // Parallel downloads: up to max_connections threads take the wanted
  // layers in order; walk() waits for each in turn.
  void start_downloads(const std::vector<bool>& want) {
    stop_downloads();
    {
      std::lock_guard<std::mutex> lock(mu_);
      fetching_.clear();
    }
    stop_ = false;
    next_ = 0;
    error_ = nullptr;
    bool all_ready;
    {
      std::lock_guard<std::mutex> lock(mu_);
      progress_ = {};
      for (size_t i = 0; i < layers_.size(); ++i) {
        if (!want[i]) continue;
        progress_.total_blobs++;
        progress_.total_bytes += layers_[i].size;
        if (fds_[i]) {
          progress_.blobs++;
          progress_.bytes += layers_[i].size;
        }
      }
      all_ready = progress_.blobs == progress_.total_blobs;
    }
    if (!all_ready) transferred(0, false);  // a second walk (import's data pass) downloads nothing
    unsigned n =
        std::max(1u, std::min<unsigned>(opt_.max_connections, static_cast<unsigned>(layers_.size())));
    for (unsigned t = 0; t < n; ++t)
      threads_.emplace_back([this, want] {
        name_this_thread("ti-fetch");
        for (;;) {
          size_t i = next_++;
          if (i >= layers_.size() || stop_) return;
          if (!want[i]) continue;
          {
            std::lock_guard<std::mutex> lock(mu_);
            if (fds_[i]) continue;
          }
          try {
            UniqueFd fd = blob(layers_[i], i);
            uint64_t rest;  // a cache hit: all of it
            {
              std::lock_guard<std::mutex> lock(mu_);
              fds_[i] = std::move(fd);
              rest = layers_[i].size - std::min(layers_[i].size, st_[i].counted);
            }
            transferred(rest, true);
          } catch (...) {
            std::lock_guard<std::mutex> lock(mu_);
            if (!error_ && !stop_) error_ = std::current_exception();
            stop_ = true;
          }
          cv_.notify_all();
        }
      });
  }

  // Waits on cv_ until `ready` (which, once true, stays true: downloads only
  // progress), with `lock` on mu_ held on return. A thread that holds a CPU
  // slot (an import's layer reader, common/cpu_slots.h) gives it back while
  // the network works, and takes it again without mu_ held.
  template <class Ready>
  void wait_for(std::unique_lock<std::mutex>& lock, Ready ready) {
    if (ready()) return;
    wait_with_slot_freed(lock, [&](std::unique_lock<std::mutex>& l) { cv_.wait(l, ready); });
  }

  // The layer's verified fd, waiting for it.
  int wait_layer(size_t i) {
    std::unique_lock<std::mutex> lock(mu_);
    wait_for(lock, [&] { return fds_[i] || error_; });
    if (fds_[i]) return fds_[i].get();
    std::rethrow_exception(error_);
  }

  // The layer's verified fd, or -1 once its download has started (then it
  // is read while it grows).
  int wait_readable(size_t i) {
    std::unique_lock<std::mutex> lock(mu_);
    wait_for(lock, [&] { return fds_[i] || st_[i].growing || error_; });
    if (fds_[i]) return fds_[i].get();
    if (error_) std::rethrow_exception(error_);
    return -1;
  }

  // A layer blob while it downloads: reads wait for the bytes to arrive.
  class GrowingBlob : public ContentReader {
   public:
    GrowingBlob(RegistrySource& s, size_t i) : s_(s), i_(i), size_(s.layers_[i].size) {}
    size_t read(char* buf, size_t n) override {
      n = static_cast<size_t>(std::min<uint64_t>(n, size_ - pos_));
      if (n == 0) return 0;
      int fd;
      uint64_t limit;
      {
        std::unique_lock<std::mutex> lock(s_.mu_);
        auto& st = s_.st_[i_];
        s_.wait_for(lock, [&] { return s_.fds_[i_] || st.avail > pos_ || s_.error_; });
        if (!s_.fds_[i_] && st.avail <= pos_) std::rethrow_exception(s_.error_);
        fd = st.growing.get();
        limit = s_.fds_[i_] ? size_ : st.avail;
      }
      FileRange r(fd, pos_, std::min<uint64_t>(n, limit - pos_), s_.name());
      size_t got = r.read(buf, n);
      if (got == 0) throw Error(s_.name(), "blob " + s_.layers_[i_].digest + ": short read");
      pos_ += got;
      return got;
    }
    uint64_t skip(uint64_t n) override {
      uint64_t step = std::min(n, size_ - pos_);
      pos_ += step;
      return step;
    }
    bool seekable() const override { return true; }

   private:
    RegistrySource& s_;
    size_t i_;
    uint64_t size_, pos_ = 0;
  };

  // Bytes of layer blobs that are ready (downloaded or cached), for on_transfer.
  void transferred(uint64_t bytes, bool blob_done) {
    std::lock_guard<std::mutex> lock(report_mu_);
    TransferProgress p;
    TransferFn fn;
    {
      std::lock_guard<std::mutex> lock2(mu_);
      progress_.bytes += bytes;
      if (blob_done) progress_.blobs++;
      p = progress_;
      fn = transfer_fn_;
    }
    if (fn) fn(p);
  }

  void stop_downloads() {
    stop_ = true;
    cv_.notify_all();
    for (auto& t : threads_) t.join();
    threads_.clear();
  }

  Reference ref_;
  std::string uri_;
  SourceOptions opt_;
  Client client_;
  BlobCache cache_;
  ImageDescription desc_;
  std::vector<Descriptor> layers_;
  // Layer blobs already opened: a second walk (import's data pass) reads
  // them again without a download, with or without a cache.
  std::vector<UniqueFd> fds_;
  struct LayerState {
    UniqueFd growing;      ///< the blob's file while it downloads
    uint64_t avail = 0;    ///< its first `avail` bytes are written and final
    uint64_t counted = 0;  ///< bytes already passed to on_transfer
  };
  std::vector<LayerState> st_;
  std::vector<bool> fetching_;  ///< the layers fetch_layers() fetches (under mu_)
  TransferFn transfer_fn_;
  TransferProgress progress_;
  std::mutex report_mu_;  ///< one on_transfer call at a time, in order
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::vector<std::thread> threads_;
  std::atomic<size_t> next_{0};
  std::atomic<bool> stop_{false};
  std::exception_ptr error_;
};

}  // namespace

SourceOptions with_defaults(SourceOptions o) {
  if (o.no_cache)
    o.cache_dir.clear();
  else if (o.cache_dir.empty())
    o.cache_dir = registry::default_cache_dir();
  if (o.platform.empty()) {
    const char* p = std::getenv("TRAINIMG_PLATFORM");
    o.platform = p && *p ? p : host_platform();
  }
  if (o.max_connections == 0) {
    const char* m = std::getenv("ENROOT_MAX_CONNECTIONS");
    long n = m && *m ? std::strtol(m, nullptr, 10) : 0;
    o.max_connections = n > 0 && n <= 256 ? static_cast<unsigned>(n) : 10;
  }
  return o;
}

std::string resolve_registry_digest(const std::string& ref, const SourceOptions& opt) {
  Reference r = registry::parse_reference(ref);
  RegistrySource src(r, "docker://" + ref, with_defaults(opt));
  std::string digest;
  src.resolve(digest);
  return digest;
}

std::string host_platform() {
  struct utsname u {};
  std::string m = uname(&u) == 0 ? u.machine : "x86_64";
  if (m == "x86_64") return "linux/amd64";
  if (m == "aarch64" || m == "arm64") return "linux/arm64";
  if (m == "ppc64le") return "linux/ppc64le";
  if (m == "s390x") return "linux/s390x";
  if (m.starts_with("armv7")) return "linux/arm/v7";
  if (m == "i686" || m == "i386") return "linux/386";
  return "linux/" + m;
}

std::unique_ptr<ImageSource> open_registry_source(const std::string& ref, const SourceOptions& opt) {
  Reference r = registry::parse_reference(ref);
  auto src = std::make_unique<RegistrySource>(r, "docker://" + ref, with_defaults(opt));
  src->load();
  return src;
}

}  // namespace trainimg::inspect
