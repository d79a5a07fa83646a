// SPDX-License-Identifier: GPL-3.0-or-later
#include "inspect/sources/registry_source.h"

#include <sys/utsname.h>
#include <unistd.h>

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "common/error.h"
#include "common/fd.h"
#include "inspect/inspect.h"
#include "inspect/registry/client.h"
#include "inspect/sources/digest.h"
#include "inspect/sources/image_config.h"
#include "inspect/sources/tar_layer.h"

namespace trainimg::inspect {
namespace {

using nlohmann::json;
using registry::BlobCache;
using registry::Client;
using registry::Reference;

constexpr uint64_t kMaxJsonBlob = 16 << 20;
constexpr int kMaxIndexDepth = 4;

struct Descriptor {
  std::string media_type, digest;
  uint64_t size = 0;
};

void write_all(int fd, std::string_view data, const std::string& what) {
  while (!data.empty()) {
    ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw_errno(what, "write");
    data.remove_prefix(static_cast<size_t>(n));
  }
}

std::string read_fd(int fd, uint64_t size, const std::string& what) {
  std::string out(size, '\0');
  FileRange r(fd, 0, size, what);
  for (size_t done = 0; done < out.size();) {
    size_t got = r.read(out.data() + done, out.size() - done);
    if (got == 0) throw Error(what, "truncated");
    done += got;
  }
  return out;
}

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

  void walk(LayerVisitor& v) override {
    start_downloads();
    for (size_t i = 0; i < layers_.size(); ++i) {
      int fd = wait_layer(i);
      FileRange range(fd, 0, layers_[i].size, name());
      walk_layer_tar(range, LayerInput{uri_, "blob " + layers_[i].digest, desc_.layers[i], i}, v);
    }
    stop_downloads();
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
    if (!j.is_object() || !j.contains("digest") || !j["digest"].is_string() || !j.contains("size") ||
        !j["size"].is_number_unsigned())
      throw Error(name(), where + ": a descriptor needs a string 'digest' and a non-negative 'size'");
    Descriptor d;
    d.digest = j["digest"].get<std::string>();
    d.size = j["size"].get<uint64_t>();
    if (j.contains("mediaType") && j["mediaType"].is_string())
      d.media_type = j["mediaType"].get<std::string>();
    if (!is_sha256_digest(d.digest))
      throw Error(name(),
                  where + ": unsupported or malformed digest '" + d.digest + "' (sha256:<64 hex> expected)");
    return d;
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
    fds_.resize(layers_.size());
  }

  // The verified blob: a cache hit, or downloaded, hashed and checked.
  UniqueFd blob(const Descriptor& d) {
    return cache_.get(d.digest, [&](int fd) {
      auto sha = std::make_unique<Sha256>();
      uint64_t n = 0;
      const std::string what = "blob " + d.digest;
      auto sink = [&](std::string_view data) {
        if (stop_) throw Error(name(), what + ": download stopped");
        if (n + data.size() > d.size)
          throw Error(name(), what + ": size mismatch: more than the " + std::to_string(d.size) +
                                  " bytes the manifest says (from " + ref_.registry + ")");
        write_all(fd, data, what);
        sha->update(data);
        n += data.size();
      };
      auto restart = [&] {
        if (ftruncate(fd, 0) != 0 || lseek(fd, 0, SEEK_SET) != 0) throw_errno(what, "truncate");
        sha = std::make_unique<Sha256>();
        n = 0;
      };
      client_.get_blob(d.digest, sink, restart);
      if (n != d.size)
        throw Error(name(), what + ": size mismatch: " + ref_.registry + " sent " + std::to_string(n) +
                                " bytes, the manifest says " + std::to_string(d.size));
      std::string got = sha->digest();
      if (got != d.digest)
        throw Error(name(), what + ": digest mismatch: the content " + ref_.registry + " sent is " + got +
                                "; nothing was cached");
    });
  }

  // Parallel downloads: up to max_connections threads take the layers in
  // order; walk() waits for each in turn.
  void start_downloads() {
    stop_downloads();
    stop_ = false;
    next_ = 0;
    error_ = nullptr;
    unsigned n =
        std::max(1u, std::min<unsigned>(opt_.max_connections, static_cast<unsigned>(layers_.size())));
    for (unsigned t = 0; t < n; ++t)
      threads_.emplace_back([this] {
        for (;;) {
          size_t i = next_++;
          if (i >= layers_.size() || stop_) return;
          {
            std::lock_guard<std::mutex> lock(mu_);
            if (fds_[i]) continue;
          }
          try {
            UniqueFd fd = blob(layers_[i]);
            std::lock_guard<std::mutex> lock(mu_);
            fds_[i] = std::move(fd);
          } catch (...) {
            std::lock_guard<std::mutex> lock(mu_);
            if (!error_ && !stop_) error_ = std::current_exception();
            stop_ = true;
          }
          cv_.notify_all();
        }
      });
  }

  int wait_layer(size_t i) {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [&] { return fds_[i] || error_; });
    if (fds_[i]) return fds_[i].get();
    std::rethrow_exception(error_);
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
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<std::thread> threads_;
  std::atomic<size_t> next_{0};
  std::atomic<bool> stop_{false};
  std::exception_ptr error_;
};

std::mutex g_options_mu;
SourceOptions g_options;

}  // namespace

void set_source_options(const SourceOptions& o) {
  std::lock_guard<std::mutex> lock(g_options_mu);
  g_options = o;
}
SourceOptions source_options() {
  SourceOptions o;
  {
    std::lock_guard<std::mutex> lock(g_options_mu);
    o = g_options;
  }
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

std::string resolve_registry_digest(const std::string& ref) {
  Reference r = registry::parse_reference(ref);
  RegistrySource src(r, "docker://" + ref, source_options());
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

std::unique_ptr<ImageSource> open_registry_source(const std::string& ref) {
  Reference r = registry::parse_reference(ref);
  auto src = std::make_unique<RegistrySource>(r, "docker://" + ref, source_options());
  src->load();
  return src;
}

}  // namespace trainimg::inspect
