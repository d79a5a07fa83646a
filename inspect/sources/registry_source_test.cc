// SPDX-License-Identifier: GPL-3.0-or-later
// docker:// against the real registry of .ci/start-registry.sh (Debian's
// docker-registry on 127.0.0.1:5500-5503): fixtures written by
// inspect/testing as OCI layouts and pushed with skopeo, then read back
// through the registry source and compared with the OCI layout source.
// Anonymous, htpasswd Basic over TLS with a test CA, Bearer tokens from the
// test token server; manifest lists, gzip and zstd layers, whiteouts and
// opaque directories, corrupted blobs and manifests in the registry's own
// storage. Skipped when the registry is not running, failed under TRAINIMG_CI=1.
#include "inspect/sources/registry_source.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <thread>

#include "common/error.h"
#include "common/sha256.h"
#include "inspect/inspect.h"
#include "inspect/registry/credentials.h"
#include "inspect/registry/registry.h"
#include "inspect/sources/oci_layout_source.h"
#include "inspect/sources/source.h"
#include "inspect/testing/image_builder.h"
#include "inspect/tree.h"

namespace trainimg::inspect {
namespace {

using namespace testing;
namespace fs = std::filesystem;

std::string state_dir() {
  if (const char* s = std::getenv("TRAINIMG_REGISTRY_STATE"); s && *s) return s;
  const char* t = std::getenv("TMPDIR");
  return std::string(t && *t ? t : "/tmp") + "/trainimg-registry";
}

std::map<std::string, std::string> registry_env() {
  std::map<std::string, std::string> env;
  std::ifstream f(state_dir() + "/env");
  for (std::string line; std::getline(f, line);)
    if (auto eq = line.find('='); eq != std::string::npos) env[line.substr(0, eq)] = line.substr(eq + 1);
  if (!env.empty() && std::system("curl -s -o /dev/null --max-time 2 http://127.0.0.1:5500/v2/") != 0)
    env.clear();
  return env;
}

// Sets environment variables for one test and restores them after it.
class ScopedEnv {
 public:
  void set(const std::string& k, const std::string& v) {
    if (!saved_.count(k)) {
      const char* old = std::getenv(k.c_str());
      saved_[k] = old ? std::optional<std::string>(old) : std::nullopt;
    }
    ::setenv(k.c_str(), v.c_str(), 1);
  }
  void unset(const std::string& k) {
    if (!saved_.count(k)) {
      const char* old = std::getenv(k.c_str());
      saved_[k] = old ? std::optional<std::string>(old) : std::nullopt;
    }
    ::unsetenv(k.c_str());
  }
  ~ScopedEnv() {
    for (const auto& [k, v] : saved_)
      if (v)
        ::setenv(k.c_str(), v->c_str(), 1);
      else
        ::unsetenv(k.c_str());
  }

 private:
  std::map<std::string, std::optional<std::string>> saved_;
};

ImageSpec ngc_like(const std::string& salt) {
  ImageSpec img;
  img.tag = "fixture:" + salt;
  img.config.env = {"PATH=/usr/local/mpi/bin:/usr/bin", "LD_LIBRARY_PATH=/opt/amazon/efa/lib"};
  img.layer()
      .dir("/usr")
      .dir("/usr/local/mpi/lib")
      .file("/usr/local/mpi/lib/libmpi.so.40.30.0", "mpi4")
      .dir("/etc/ld.so.conf.d")
      .file("/etc/ld.so.conf.d/old.conf", "/old\n")
      .file("/etc/salt", salt)
      .file("/etc/big", std::string(300000, 'b'));
  img.layer()
      .dir("/opt/amazon/efa/lib")
      .file("/opt/amazon/efa_installed_packages", "# EFA installer version: 1.50.0\n")
      .file("/opt/amazon/efa/lib/libfabric.so.1.26.0", "fabric", 0755)
      .hardlink("/opt/amazon/efa/lib/libfabric.so.1", "/opt/amazon/efa/lib/libfabric.so.1.26.0")
      .symlink("/opt/amazon/efa/lib/libfabric.so", "libfabric.so.1");
  img.layer()
      .whiteout("/usr/local/mpi")
      .dir("/etc/ld.so.conf.d")
      .opaque("/etc/ld.so.conf.d")
      .file("/etc/ld.so.conf.d/efa.conf", "/opt/amazon/efa/lib\n")
      .file("/etc/salt2", salt + salt);
  return img;
}

std::string listing(ImageSource& src) {
  return tree_listing(build_tree(
      src, [](const Entry&) { return true; }, capture_all));
}

class RegistrySourceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    env_ = registry_env();
    if (env_.empty()) {
      if (std::getenv("TRAINIMG_CI")) FAIL() << "the test registry is not running (.ci/start-registry.sh)";
      GTEST_SKIP() << "no test registry (run .ci/start-registry.sh)";
    }
    scoped_.set("TRAINIMG_CACHE", cache_.path());
    scoped_.set("TRAINIMG_ALLOW_HTTP", "1");
    scoped_.set("ENROOT_CONFIG_PATH", conf_.path());
    scoped_.set("DOCKER_CONFIG", conf_.path());
    scoped_.unset("TRAINIMG_PLATFORM");
    scoped_.unset("SSL_CERT_FILE");
    scoped_.unset("TRAINIMG_CA_BUNDLE");
    scoped_.set("no_proxy", "127.0.0.1,localhost");
  }

  // Pushes `img` (OCI layout, as `o` says) to the anonymous registry as REPO:TAG.
  std::string push(const ImageSpec& img, const std::string& repo, const OciOptions& o = {}) {
    std::string layout = tmp_ / (repo.substr(repo.rfind('/') + 1) + "-oci");
    write_oci_layout(img, layout, o);
    std::string tag = img.tag.substr(img.tag.find(':') + 1);
    std::string cmd = "skopeo copy --quiet --all --dest-tls-verify=false oci:" + layout + ":" + tag +
                      " docker://" + env_["TRAINIMG_TEST_REGISTRY_ANON"] + "/" + repo + ":" + tag +
                      " >/dev/null";
    EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
    return layout;
  }

  std::string cached_blob(const std::string& digest) const {
    return cache_ / ("blobs/sha256/" + digest.substr(7));
  }

  // The registry's own copy of a blob (its filesystem storage driver).
  std::string stored_blob(const std::string& digest) const {
    std::string hex = digest.substr(7);
    return state_dir() + "/storage/docker/registry/v2/blobs/sha256/" + hex.substr(0, 2) + "/" + hex + "/data";
  }

  std::map<std::string, std::string> env_;
  ScopedEnv scoped_;
  TempDir cache_, conf_, tmp_;
};

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.diagnostic().file + ": " + e.diagnostic().message;
  }
  return "no error";
}

TEST_F(RegistrySourceTest, AnonymousGzipSameTreeAsOciLayout) {
  ImageSpec img = ngc_like("anon-gzip");
  std::string layout = push(img, "test/anon");
  auto reg = open_source("docker://" + env_["TRAINIMG_TEST_REGISTRY_ANON"] + "/test/anon:anon-gzip");
  auto oci = open_oci_layout_source(layout);
  ImageDescription d = reg->describe();
  EXPECT_EQ(d.kind, "registry");
  EXPECT_EQ(d.layers, oci->describe().layers);
  EXPECT_EQ(d.config_digest, oci->describe().config_digest);
  EXPECT_EQ(d.digest, oci->describe().digest);
  EXPECT_EQ(d.config.env, img.config.env);
  std::string want = listing(*oci);
  // The whiteout and the opaque directory took effect.
  EXPECT_EQ(want.find("/usr/local/mpi/lib/libmpi"), std::string::npos) << want;
  EXPECT_EQ(want.find("/etc/ld.so.conf.d/old.conf"), std::string::npos) << want;
  EXPECT_NE(want.find("/etc/ld.so.conf.d/efa.conf"), std::string::npos) << want;
  EXPECT_EQ(listing(*reg), want);
  // Every blob is in the cache under its digest, and nothing else is left.
  EXPECT_TRUE(fs::exists(cached_blob(d.digest)));
  EXPECT_TRUE(fs::exists(cached_blob(d.config_digest)));
  EXPECT_TRUE(fs::is_empty(cache_ / "tmp"));
}

TEST_F(RegistrySourceTest, EnrootFormAndZstdLayers) {
  ImageSpec img = ngc_like("zstd");
  OciOptions o;
  o.compression = Compression::Zstd;
  std::string layout = push(img, "test/zstd", o);
  auto reg = open_source("docker://" + env_["TRAINIMG_TEST_REGISTRY_ANON"] + "#test/zstd:zstd");
  auto oci = open_oci_layout_source(layout);
  EXPECT_EQ(listing(*reg), listing(*oci));
}

TEST_F(RegistrySourceTest, ManifestListPicksPlatformAndListsWhatItOffers) {
  ImageSpec img = ngc_like("list");
  OciOptions o;
  o.manifest_list = true;
  std::string layout = push(img, "test/list", o);
  const std::string ref = "docker://" + env_["TRAINIMG_TEST_REGISTRY_ANON"] + "/test/list:list";
  SourceOptions so;
  so.platform = "linux/amd64";
  auto amd = open_source(ref, so);
  EXPECT_EQ(listing(*amd), listing(*open_oci_layout_source(layout)));
  so.platform = "linux/arm64";
  auto arm = open_source(ref, so);
  EXPECT_NE(listing(*arm).find("/arm64-only"), std::string::npos);
  so.platform = "linux/s390x";
  std::string err = error_of([&] { open_source(ref, so); });
  EXPECT_NE(err.find("has no linux/s390x image (it offers: linux/arm64, linux/amd64)"), std::string::npos)
      << err;
}

TEST_F(RegistrySourceTest, BasicAuthOverTlsWithNetrcCredentials) {
  push(ngc_like("basic"), "test/basic");
  const std::string reg = env_["TRAINIMG_TEST_REGISTRY_BASIC"];
  const std::string ref = "docker://" + reg + "/test/basic:basic";
  const std::string secret = env_["TRAINIMG_TEST_REGISTRY_PASSWORD"];
  // No CA: refused, with a hint; never a silent fallback to plain HTTP.
  scoped_.unset("TRAINIMG_ALLOW_HTTP");
  std::string err = error_of([&] { open_source(ref); });
  EXPECT_NE(err.find("cannot reach " + reg + " over HTTPS"), std::string::npos) << err;
  scoped_.set("TRAINIMG_CA_BUNDLE", env_["TRAINIMG_TEST_REGISTRY_CA"]);
  // No credentials: 401 naming the registry.
  err = error_of([&] { open_source(ref); });
  EXPECT_NE(err.find("HTTP 401 (unauthorized) from " + reg), std::string::npos) << err;
  // Wrong password: the same, and the secret is nowhere in the message.
  write_bytes(conf_ / ".credentials", "machine " + reg + " login trainimg password wrong-" + secret + "\n");
  err = error_of([&] { open_source(ref); });
  EXPECT_NE(err.find("HTTP 401 (unauthorized) from " + reg), std::string::npos) << err;
  EXPECT_NE(err.find(".credentials"), std::string::npos) << err;
  EXPECT_EQ(err.find(secret), std::string::npos) << err;
  // enroot's $(command) password.
  write_bytes(conf_ / ".credentials",
              "machine " + reg + " login trainimg password $(printf '%s' " + secret + ")\n");
  auto src = open_source(ref);
  EXPECT_NE(listing(*src).find("/etc/salt"), std::string::npos);
}

TEST_F(RegistrySourceTest, BearerTokenWithDockerConfigCredentials) {
  push(ngc_like("token"), "test/token");
  const std::string reg = env_["TRAINIMG_TEST_REGISTRY_TOKEN"];
  const std::string ref = "docker://" + reg + "/test/token:token";
  const std::string user = env_["TRAINIMG_TEST_REGISTRY_USER"],
                    secret = env_["TRAINIMG_TEST_REGISTRY_PASSWORD"];
  std::string err = error_of([&] { open_source(ref); });
  EXPECT_NE(err.find("HTTP 401 (unauthorized) from " + reg), std::string::npos) << err;
  write_bytes(conf_ / "config.json", R"({"auths":{")" + reg + R"(":{"auth":")" +
                                         registry::base64_encode(user + ":nope") + R"("}}})");
  err = error_of([&] { open_source(ref); });
  EXPECT_NE(
      err.find("token server 127.0.0.1:5503: HTTP 401 (unauthorized): wrong or missing credentials for " +
               reg),
      std::string::npos)
      << err;
  EXPECT_EQ(err.find(secret), std::string::npos);
  write_bytes(conf_ / "config.json", R"({"auths":{")" + reg + R"(":{"auth":")" +
                                         registry::base64_encode(user + ":" + secret) + R"("}}})");
  auto src = open_source(ref);
  EXPECT_NE(listing(*src).find("/etc/salt"), std::string::npos);
  // One token for the scope, reused by every request of that source.
  std::ifstream log(env_["TRAINIMG_TEST_REGISTRY_TOKEN_LOG"]);
  std::string all((std::istreambuf_iterator<char>(log)), {});
  EXPECT_NE(all.find("200 /token user=" + user + " scope=repository:test/token:pull"), std::string::npos);
}

TEST_F(RegistrySourceTest, FlippedByteInALayerIsRefusedAndNothingIsCached) {
  ImageSpec img = ngc_like("flipped");
  std::string layout = push(img, "test/flipped");
  // The last layer's blob digest (a layer no other fixture shares), from the layout's manifest.
  auto index = nlohmann::json::parse(read_bytes(layout + "/index.json"));
  std::string mdigest = index["manifests"][0]["digest"];
  auto manifest = nlohmann::json::parse(read_bytes(layout + "/blobs/sha256/" + mdigest.substr(7)));
  std::string blob = manifest["layers"][2]["digest"];
  std::string stored = stored_blob(blob);
  std::string bytes = read_bytes(stored);
  bytes[bytes.size() / 2] ^= 0x20;
  write_bytes(stored, bytes);
  const std::string ref = "docker://" + env_["TRAINIMG_TEST_REGISTRY_ANON"] + "/test/flipped:flipped";
  std::string err = error_of([&] {
    auto src = open_source(ref);
    listing(*src);
  });
  EXPECT_NE(err.find("blob " + blob + ": digest mismatch"), std::string::npos) << err;
  EXPECT_FALSE(fs::exists(cached_blob(blob)));
  EXPECT_TRUE(fs::is_empty(cache_ / "tmp"));
}

TEST_F(RegistrySourceTest, PinnedDigestVerifiedAndOfflineFromTheCache) {
  ImageSpec img = ngc_like("pinned");
  std::string layout = push(img, "test/pinned");
  auto index = nlohmann::json::parse(read_bytes(layout + "/index.json"));
  std::string mdigest = index["manifests"][0]["digest"];
  const std::string anon = env_["TRAINIMG_TEST_REGISTRY_ANON"];
  {
    auto src = open_source("docker://" + anon + "/test/pinned:pinned@" + mdigest);
    EXPECT_EQ(src->describe().digest, mdigest);
    listing(*src);
  }
  // The resolved manifest digest is a fact of the inspection, by tag as by digest.
  Report rep = inspect_image("docker://" + anon + "/test/pinned:pinned", ImageExpectations{});
  EXPECT_EQ(rep.facts["image"]["digest"], mdigest) << rep.facts["image"].dump();
  // Nothing listens on 5509: every blob comes from the cache.
  auto offline = open_source("docker://127.0.0.1:5509/test/pinned@" + mdigest);
  EXPECT_EQ(listing(*offline), listing(*open_oci_layout_source(layout)));
  // --no-cache: the same reference needs the registry, and writes nothing.
  SourceOptions so;
  so.no_cache = true;
  std::string err = error_of([&] { open_source("docker://127.0.0.1:5509/test/pinned@" + mdigest, so); });
  EXPECT_NE(err.find("127.0.0.1:5509"), std::string::npos) << err;
  TempDir other;
  scoped_.set("TRAINIMG_CACHE", other.path());
  auto nc = open_source("docker://" + anon + "/test/pinned@" + mdigest, so);
  listing(*nc);
  EXPECT_TRUE(fs::is_empty(other.path()));
  // A manifest whose bytes no longer match the pin (corrupted in the registry's storage).
  std::string stored = stored_blob(mdigest);
  std::string bytes = read_bytes(stored);
  write_bytes(stored, bytes + " ");
  TempDir fresh;
  scoped_.set("TRAINIMG_CACHE", fresh.path());
  err = error_of([&] { open_source("docker://" + anon + "/test/pinned@" + mdigest); });
  EXPECT_NE(err.find("digest mismatch"), std::string::npos) << err;
  EXPECT_NE(err.find(mdigest), std::string::npos) << err;
  EXPECT_FALSE(fs::exists(fresh / ("blobs/sha256/" + mdigest.substr(7))));
  write_bytes(stored, bytes);
}

TEST_F(RegistrySourceTest, MissingImageNamesRegistryRepositoryAndStatus) {
  const std::string anon = env_["TRAINIMG_TEST_REGISTRY_ANON"];
  std::string err = error_of([&] { open_source("docker://" + anon + "/test/none:nope"); });
  EXPECT_NE(
      err.find("docker://" + anon + "/test/none: GET /v2/test/none/manifests/nope: HTTP 404 from " + anon),
      std::string::npos)
      << err;
}

// tests/registry/fault_proxy.py on 127.0.0.1:PORT (5504-5507, one per test, so
// that ctest -j can run them at once) in front of the anonymous
// registry, in one MODE, for one test; its request log is returned by log().
class FaultProxy {
 public:
  FaultProxy(int port, const std::string& upstream, const std::string& mode, const std::string& log)
      : log_(log) {
    pid_ = fork();
    if (pid_ == 0) {
      std::string script = std::string(TRAINIMG_SOURCE_DIR) + "/tests/registry/fault_proxy.py";
      execl("/usr/bin/python3", "python3", script.c_str(), std::to_string(port).c_str(),
            ("http://" + upstream).c_str(), mode.c_str(), log.c_str(), nullptr);
      _exit(127);
    }
    for (int i = 0; i < 100; ++i) {
      if (std::system(
              ("curl -s -o /dev/null --max-time 1 http://127.0.0.1:" + std::to_string(port) + "/r/v2/")
                  .c_str()) == 0)
        break;
      usleep(100000);
    }
    write_bytes(log_, "");
  }
  ~FaultProxy() {
    if (pid_ > 0) {
      kill(pid_, SIGTERM);
      waitpid(pid_, nullptr, 0);
    }
  }
  std::string log() const { return read_bytes(log_); }

 private:
  pid_t pid_ = -1;
  std::string log_;
};

// Bytes that gzip cannot shrink much, so a layer blob is large.
std::string noise(size_t n, uint32_t seed) {
  std::string s(n, '\0');
  for (auto& c : s) {
    seed = seed * 1664525u + 1013904223u;
    c = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"[seed >> 26];
  }
  return s;
}

TEST_F(RegistrySourceTest, RetriesOn500And429ThenSucceeds) {
  ImageSpec img = ngc_like("errors");
  std::string layout = push(img, "test/errors");
  FaultProxy proxy(5504, env_["TRAINIMG_TEST_REGISTRY_ANON"], "errors", tmp_ / "proxy.log");
  auto src = open_source("docker://127.0.0.1:5504/test/errors:errors");
  EXPECT_EQ(listing(*src), listing(*open_oci_layout_source(layout)));
  std::string log = proxy.log();
  const std::string config = src->describe().config_digest;
  // The config blob was asked for three times: 500, 429 (Retry-After: 1), then 200.
  size_t n = 0;
  for (size_t at = log.find("/blobs/" + config); at != std::string::npos;
       at = log.find("/blobs/" + config, at + 1))
    ++n;
  EXPECT_EQ(n, 3u) << log;
}

TEST_F(RegistrySourceTest, ACutBlobResumesWithRange) {
  ImageSpec img = ngc_like("cut");
  img.layers[2].file("/big-noise", noise(400000, 7));
  std::string layout = push(img, "test/cut");
  FaultProxy proxy(5505, env_["TRAINIMG_TEST_REGISTRY_ANON"], "cut", tmp_ / "proxy.log");
  auto src = open_source("docker://127.0.0.1:5505/test/cut:cut");
  EXPECT_EQ(listing(*src), listing(*open_oci_layout_source(layout)));
  std::string log = proxy.log();
  EXPECT_NE(log.find("range=bytes="), std::string::npos) << log;
  EXPECT_TRUE(fs::is_empty(cache_ / "tmp"));
}

// The registry ignores Range on the retry and sends the whole blob again:
// the bytes already received are compared, not rewritten, and the image reads
// back the same; when the blob sent again differs from what came first (one
// byte, in the part already received), it is refused and nothing is cached.
TEST_F(RegistrySourceTest, ARestartWithoutRangeComparesTheBytesAlreadyReceived) {
  ImageSpec img = ngc_like("norange");
  img.layers[2].file("/big-noise", noise(400000, 11));
  std::string layout = push(img, "test/norange");
  {
    FaultProxy proxy(5508, env_["TRAINIMG_TEST_REGISTRY_ANON"], "norange", tmp_ / "proxy.log");
    auto src = open_source("docker://127.0.0.1:5508/test/norange:norange");
    EXPECT_EQ(listing(*src), listing(*open_oci_layout_source(layout)));
    EXPECT_NE(proxy.log().find("range=bytes="), std::string::npos) << proxy.log();
    EXPECT_TRUE(fs::is_empty(cache_ / "tmp"));
  }
  TempDir other_cache;
  scoped_.set("TRAINIMG_CACHE", other_cache.path());
  FaultProxy proxy(5511, env_["TRAINIMG_TEST_REGISTRY_ANON"], "norange-flip", tmp_ / "proxy2.log");
  std::string err = error_of([&] {
    auto src = open_source("docker://127.0.0.1:5511/test/norange:norange");
    listing(*src);
  });
  EXPECT_NE(err.find("sent different bytes when the download started over"), std::string::npos) << err;
  EXPECT_TRUE(fs::is_empty(other_cache / "tmp"));
  for (const auto& e : fs::directory_iterator(other_cache / "blobs/sha256")) {
    // Only blobs that verified are there: each one's name is its content's digest.
    EXPECT_EQ(sha256_digest(read_bytes(e.path())), "sha256:" + e.path().filename().string());
  }
}

// A layer is read while it downloads: the proxy holds back the second half of
// the big layer until the walk has seen entries of that layer.
TEST_F(RegistrySourceTest, ALayerIsWalkedWhileItDownloads) {
  ImageSpec img = ngc_like("stall");
  img.layers[2].file("/zz-big-noise", noise(600000, 13));
  std::string layout = push(img, "test/stall");
  FaultProxy proxy(5510, env_["TRAINIMG_TEST_REGISTRY_ANON"], "stall", tmp_ / "proxy.log");
  const std::string release = tmp_ / "proxy.log.release";
  auto src = open_source("docker://127.0.0.1:5510/test/stall:stall");
  struct Visitor : LayerVisitor {
    std::string release;
    size_t layer = 0;
    int early = 0;  // entries of the last layer seen while its blob was held back
    void begin_layer(const std::string&, size_t index) override { layer = index; }
    bool entry(const Entry&) override {
      if (layer == 2 && !fs::exists(release)) {
        ++early;
        write_bytes(release, "");
      }
      return false;
    }
  } v;
  v.release = release;
  src->walk(v);
  EXPECT_EQ(v.early, 1);
  EXPECT_EQ(proxy.log().find("stall-timeout"), std::string::npos) << proxy.log();
  EXPECT_TRUE(fs::is_empty(cache_ / "tmp"));
}

// What one walk of each layer shows: its entries' paths, by layer index.
struct PathsByLayer : LayerVisitor {
  std::mutex mu;
  std::map<std::string, std::vector<std::string>> paths;  ///< by layer id
  void begin_layer(const std::string& id, size_t) override {
    std::lock_guard<std::mutex> lock(mu);
    paths[id];
  }
  bool entry(const Entry& e) override {
    std::lock_guard<std::mutex> lock(mu);
    paths[e.layer].push_back(e.path);
    return false;
  }
};

// fetch_layers() starts the downloads; each layer is then walked on a thread
// of its own while later ones still arrive (the held-back blob too), with
// the entries one walk() gives; a flipped byte fails that layer's walk.
TEST_F(RegistrySourceTest, FetchedLayersAreWalkedSideBySideWhileTheyDownload) {
  ImageSpec img = ngc_like("sidebyside");
  img.layers[2].file("/zz-big-noise", noise(600000, 14));
  push(img, "test/sidebyside");
  // A port of its own: ctest runs the other stall test (5510) beside this one.
  FaultProxy proxy(5514, env_["TRAINIMG_TEST_REGISTRY_ANON"], "stall", tmp_ / "proxy.log");
  const std::string release = tmp_ / "proxy.log.release";
  PathsByLayer whole;
  open_source("docker://" + env_["TRAINIMG_TEST_REGISTRY_ANON"] + "/test/sidebyside:sidebyside")->walk(whole);
  ScopedEnv fresh;
  TempDir cache2;
  fresh.set("TRAINIMG_CACHE", cache2.path());
  auto src = open_source("docker://127.0.0.1:5514/test/sidebyside:sidebyside");
  ASSERT_EQ(src->describe().layers.size(), 3u);
  EXPECT_FALSE(src->can_walk_layer(0));
  ASSERT_TRUE(src->fetch_layers({true, true, true}));
  for (size_t i = 0; i < 3; ++i) EXPECT_TRUE(src->can_walk_layer(i)) << i;
  struct Early : PathsByLayer {
    std::string release, last;
    std::atomic<int> early{0};  // entries of the last layer seen while its blob was held back
    bool entry(const Entry& e) override {
      if (e.layer == last && !fs::exists(release)) {
        ++early;
        write_bytes(release, "");
      }
      return PathsByLayer::entry(e);
    }
  } side;
  side.release = release;
  side.last = src->describe().layers[2];
  std::vector<std::thread> threads;
  std::vector<std::string> errors(3);
  for (size_t i = 0; i < 3; ++i)
    threads.emplace_back([&, i] { errors[i] = error_of([&] { src->walk_layer(2 - i, side); }); });
  for (auto& t : threads) t.join();
  for (const std::string& e : errors) EXPECT_EQ(e, "no error");
  EXPECT_EQ(side.early.load(), 1);
  EXPECT_EQ(side.paths, whole.paths);
  EXPECT_EQ(proxy.log().find("stall-timeout"), std::string::npos) << proxy.log();

  // A flipped byte in a fetched layer: its walk fails, nothing is cached.
  auto index = nlohmann::json::parse(read_bytes(tmp_ / "sidebyside-oci/index.json"));
  std::string mdigest = index["manifests"][0]["digest"];
  auto manifest =
      nlohmann::json::parse(read_bytes(tmp_ / ("sidebyside-oci/blobs/sha256/" + mdigest.substr(7))));
  std::string blob = manifest["layers"][2]["digest"];
  std::string bytes = read_bytes(stored_blob(blob));
  bytes[bytes.size() / 2] ^= 0x20;
  write_bytes(stored_blob(blob), bytes);
  TempDir cache3;
  fresh.set("TRAINIMG_CACHE", cache3.path());
  auto bad = open_source("docker://" + env_["TRAINIMG_TEST_REGISTRY_ANON"] + "/test/sidebyside:sidebyside");
  ASSERT_TRUE(bad->fetch_layers({false, false, true}));
  EXPECT_FALSE(bad->can_walk_layer(0));
  PathsByLayer none;
  std::string err = error_of([&] { bad->walk_layer(2, none); });
  EXPECT_NE(err.find("blob " + blob + ": digest mismatch"), std::string::npos) << err;
  EXPECT_FALSE(fs::exists(cache3 / ("blobs/sha256/" + blob.substr(7))));
}

TEST_F(RegistrySourceTest, ARedirectToAnotherHostCarriesNoAuthorization) {
  ImageSpec img = ngc_like("redirect");
  std::string layout = push(img, "test/redirect");
  FaultProxy proxy(5506, env_["TRAINIMG_TEST_REGISTRY_ANON"], "redirect", tmp_ / "proxy.log");
  write_bytes(conf_ / ".credentials", "machine 127.0.0.1:5506 login u password pw\n");
  auto src = open_source("docker://127.0.0.1:5506/test/redirect:redirect");
  EXPECT_EQ(listing(*src), listing(*open_oci_layout_source(layout)));
  std::string log = proxy.log();
  EXPECT_NE(log.find("/manifests/redirect range=- auth=yes"), std::string::npos) << log;
  EXPECT_NE(log.find("GET /r/v2/test/redirect/blobs/"), std::string::npos) << log;
  for (size_t at = log.find("GET /r/"); at != std::string::npos; at = log.find("GET /r/", at + 1)) {
    std::string line = log.substr(at, log.find('\n', at) - at);
    if (line.find("/blobs/") != std::string::npos) {
      EXPECT_NE(line.find("auth=no"), std::string::npos) << line;
    }
  }
}

TEST_F(RegistrySourceTest, EightProcessesOnAnEmptyCacheDownloadEachBlobOnce) {
  ImageSpec img = ngc_like("eight");
  img.layers[0].file("/noise", noise(200000, 3));
  std::string layout = push(img, "test/eight");
  FaultProxy proxy(5507, env_["TRAINIMG_TEST_REGISTRY_ANON"], "pass", tmp_ / "proxy.log");
  const std::string want = listing(*open_oci_layout_source(layout));
  std::vector<pid_t> kids;
  for (int i = 0; i < 8; ++i) {
    pid_t pid = fork();
    if (pid == 0) {
      int rc = 1;
      try {
        auto src = open_source("docker://127.0.0.1:5507/test/eight:eight");
        rc = listing(*src) == want ? 0 : 3;
      } catch (...) {
        rc = 4;
      }
      _exit(rc);
    }
    kids.push_back(pid);
  }
  for (pid_t k : kids) {
    int st = 0;
    waitpid(k, &st, 0);
    EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0) << st;
  }
  std::string log = proxy.log();
  std::map<std::string, int> gets;
  for (size_t at = log.find("/blobs/sha256:"); at != std::string::npos;
       at = log.find("/blobs/sha256:", at + 1))
    gets[log.substr(at + 7, 71)]++;
  EXPECT_EQ(gets.size(), 4u) << log;  // the config and three layers
  for (const auto& [digest, n] : gets) EXPECT_EQ(n, 1) << digest << "\n" << log;
  EXPECT_TRUE(fs::is_empty(cache_ / "tmp"));
}

TEST(BlobCacheSizes, ParsesDurations) {  // sizes: common/units_test.cc
  EXPECT_EQ(registry::parse_duration("7d"), 7 * 86400);
  EXPECT_EQ(registry::parse_duration("12h"), 12 * 3600);
  EXPECT_FALSE(registry::parse_duration("12"));
  EXPECT_FALSE(registry::parse_duration("h"));
}

}  // namespace
}  // namespace trainimg::inspect
