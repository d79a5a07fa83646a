// SPDX-License-Identifier: GPL-3.0-or-later
// The shared .sqsh cache of `trainimg pyxis-importer get` (TRAINIMG_PYXIS_CACHE,
// builder/pyxis/cache.h), driven as Pyxis drives its importer: against the
// real registry of .ci/start-registry.sh (127.0.0.1:5500), through
// tests/registry/fault_proxy.py on 5512 (pass: counts requests) and 5513
// (slow: an import long enough to be killed). Images: OCI layouts written
// here, pushed with skopeo. The registry cases are skipped when the
// registry is not running, failed under TRAINIMG_CI=1.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "tests/cli_test_util.h"

namespace {

using trainimg::testing::put;
using trainimg::testing::slurp;

namespace fs = std::filesystem;

std::string registry_anon() {
  const char* s = std::getenv("TRAINIMG_REGISTRY_STATE");
  const char* t = std::getenv("TMPDIR");
  std::string state = s && *s ? s : std::string(t && *t ? t : "/tmp") + "/trainimg-registry";
  if (std::system("curl -s -o /dev/null --max-time 2 http://127.0.0.1:5500/v2/") != 0) return "";
  return fs::exists(state + "/env") ? "127.0.0.1:5500" : "";
}

std::string host() {
  char h[256] = {};
  gethostname(h, sizeof h - 1);
  return h;
}

std::string registry_state() {
  const char* s = std::getenv("TRAINIMG_REGISTRY_STATE");
  const char* t = std::getenv("TMPDIR");
  return s && *s ? s : std::string(t && *t ? t : "/tmp") + "/trainimg-registry";
}

class FaultProxy {
 public:
  FaultProxy(int port, const std::string& mode, const fs::path& log) : log_(log) {
    pid_ = fork();
    if (pid_ == 0) {
      std::string script = std::string(TRAINIMG_SOURCE_DIR) + "/tests/registry/fault_proxy.py";
      execl("/usr/bin/python3", "python3", script.c_str(), std::to_string(port).c_str(),
            "http://127.0.0.1:5500", mode.c_str(), log.c_str(), nullptr);
      _exit(127);
    }
    for (int i = 0; i < 100; ++i) {
      std::string probe =
          "curl -s -o /dev/null --max-time 1 http://127.0.0.1:" + std::to_string(port) + "/v2/";
      if (std::system(probe.c_str()) == 0) break;
      usleep(100000);
    }
    std::ofstream(log_, std::ios::trunc);
  }
  ~FaultProxy() {
    kill(pid_, SIGTERM);
    waitpid(pid_, nullptr, 0);
  }
  std::string log() const { return slurp(log_); }

 private:
  pid_t pid_ = -1;
  fs::path log_;
};

class PyxisCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / "trainimg-pyxis-cache-XXXXXX").string();
    ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
    t_ = tmpl;
    shared_ = t_ / "shared";
    fs::create_directories(shared_);
    fs::permissions(shared_, fs::perms(01777));
    salt_ = std::to_string(getpid()) + "-" + std::to_string(std::time(nullptr)) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name();
  }
  void TearDown() override {
    // Leases still held (a failed test) are dropped: their keepers exit.
    for (int step = 0; step < 10; ++step) importer(step, "release");
    fs::remove_all(t_);
  }
  bool need_registry() {
    anon_ = registry_anon();
    if (!anon_.empty()) return true;
    if (std::getenv("TRAINIMG_CI"))
      ADD_FAILURE() << "the test registry is not running (.ci/start-registry.sh)";
    return false;
  }

  // A two-file rootfs with this test's salt, as a one-layer OCI layout; returns the manifest digest.
  std::string oci_layout(const fs::path& out, size_t noise_bytes = 0) {
    fs::path root = t_ / "rootfs";
    put(root / "etc/salt", salt_ + "\n");
    put(root / "usr/bin/tool", "#!/bin/sh\necho tool\n");
    if (noise_bytes) {
      std::string n(noise_bytes, '\0');
      uint32_t seed = 7;
      for (auto& c : n) c = static_cast<char>('A' + ((seed = seed * 1664525u + 1013904223u) >> 27));
      put(root / "opt/noise", n);
    }
    std::string script = R"SH(set -e
r="$1"; o="$2"; mkdir -p "$o/blobs/sha256"
tar -C "$r" --owner=0 --group=0 --numeric-owner --mtime=@1700000000 --sort=name -cf - . | gzip -n >"$o/layer.tgz"
D=$(tar -C "$r" --owner=0 --group=0 --numeric-owner --mtime=@1700000000 --sort=name -cf - . | sha256sum | cut -d' ' -f1)
blob() { d=$(sha256sum "$1" | cut -d' ' -f1); mv "$1" "$o/blobs/sha256/$d"; echo "$d $(stat -c %s "$o/blobs/sha256/$d")"; }
set -- $(blob "$o/layer.tgz"); L=$1; LS=$2
printf '{"architecture":"amd64","os":"linux","config":{"Env":["PATH=/usr/bin:/bin"]},"rootfs":{"type":"layers","diff_ids":["sha256:%s"]}}' $D >"$o/c.json"
set -- $(blob "$o/c.json"); C=$1; CS=$2
printf '{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json","config":{"mediaType":"application/vnd.oci.image.config.v1+json","digest":"sha256:%s","size":%s},"layers":[{"mediaType":"application/vnd.oci.image.layer.v1.tar+gzip","digest":"sha256:%s","size":%s}]}' $C $CS $L $LS >"$o/m.json"
set -- $(blob "$o/m.json"); M=$1; MS=$2
printf '{"schemaVersion":2,"manifests":[{"mediaType":"application/vnd.oci.image.manifest.v1+json","digest":"sha256:%s","size":%s,"annotations":{"org.opencontainers.image.ref.name":"t"}}]}' $M $MS >"$o/index.json"
printf '{"imageLayoutVersion":"1.0.0"}' >"$o/oci-layout"
echo "sha256:$M $L"
)SH";
    put(t_ / "oci.sh", script);
    std::string cmd = "sh '" + (t_ / "oci.sh").string() + "' '" + root.string() + "' '" + out.string() +
                      "' >'" + (t_ / "digests").string() + "'";
    EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
    std::string d = slurp(t_ / "digests");
    layer_ = "sha256:" + d.substr(d.find(' ') + 1, 64);
    return d.substr(0, d.find(' '));
  }
  void push(const fs::path& layout, const std::string& repo) {
    std::string cmd = "skopeo copy --quiet --dest-tls-verify=false oci:" + layout.string() + ":t docker://" +
                      anon_ + "/" + repo + ":t >/dev/null";
    ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  }

  // Pyxis's environment for job 7 step STEP, each with its own blob cache.
  std::string env(int step) const {
    return "env -i PATH=/usr/bin:/bin PYXIS_RUNTIME_PATH=" + (t_ / "rt").string() +
           " SLURM_JOB_UID=1000 SLURM_JOB_ID=7 SLURM_STEP_ID=" + std::to_string(step) +
           " TRAINIMG_PREFLIGHT=off TRAINIMG_ALLOW_HTTP=1 no_proxy=127.0.0.1 TRAINIMG_CACHE=" +
           (t_ / ("blobs" + std::to_string(step))).string() + " TRAINIMG_PYXIS_CACHE=" + shared_.string() +
           " ";
  }
  // One importer call for STEP; rc, stdout and stderr in t_/rc.STEP, out.STEP, err.STEP.
  std::string importer_cmd(int step, const std::string& args, const std::string& wrapper = "") const {
    std::string s = std::to_string(step);
    return env(step) + wrapper + TRAINIMG_BIN + " pyxis-importer " + args + " >" +
           (t_ / ("out." + s)).string() + " 2>" + (t_ / ("err." + s)).string();
  }
  int importer(int step, const std::string& args) const {
    int st = std::system(importer_cmd(step, args).c_str());
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  }
  std::string out(int step) const { return slurp(t_ / ("out." + std::to_string(step))); }
  std::string err(int step) const { return slurp(t_ / ("err." + std::to_string(step))); }
  std::string trainimg(const std::string& args) const {
    std::string cmd = std::string(TRAINIMG_BIN) + " " + args + " >" + (t_ / "cli").string() + " 2>&1";
    EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd << "\n" << slurp(t_ / "cli");
    return slurp(t_ / "cli");
  }
  // Every file under `dir` whose name contains `hex`.
  static std::vector<std::string> named_after(const fs::path& dir, const std::string& hex) {
    std::vector<std::string> out;
    if (!fs::exists(dir)) return out;
    for (const auto& e : fs::recursive_directory_iterator(dir))
      if (e.path().filename().string().find(hex) != std::string::npos) out.push_back(e.path().string());
    return out;
  }
  static std::vector<std::string> partials(const fs::path& dir) {
    std::vector<std::string> out;
    for (const auto& e : fs::recursive_directory_iterator(dir))
      if (e.path().filename().string().find("partial") != std::string::npos) out.push_back(e.path().string());
    return out;
  }

  fs::path t_, shared_;
  std::string salt_, anon_, layer_;
};

TEST_F(PyxisCacheTest, EightStepsGetOnePathFromOneImportAndOneDownloadOfEachBlob) {
  if (!need_registry()) GTEST_SKIP() << "no test registry (run .ci/start-registry.sh)";
  const std::string manifest = oci_layout(t_ / "img.oci", 300000);
  push(t_ / "img.oci", "test/pyxis-eight");
  FaultProxy proxy(5512, "pass", t_ / "proxy.log");
  std::string all;
  for (int i = 0; i < 8; ++i)
    all += "(" + importer_cmd(i, "get docker://127.0.0.1:5512/test/pyxis-eight:t") + "; echo $? >" +
           (t_ / ("rc." + std::to_string(i))).string() + ") & ";
  ASSERT_EQ(std::system((all + "wait").c_str()), 0);
  const std::string want = (shared_ / ("sha256-" + manifest.substr(7) + "-zstd3-1M.sqsh")).string();
  int imports = 0;
  for (int i = 0; i < 8; ++i) {
    EXPECT_EQ(slurp(t_ / ("rc." + std::to_string(i))), "0\n") << err(i);
    EXPECT_EQ(out(i), want + "\n") << err(i);
    imports += err(i).find("pyxis cache: importing") != std::string::npos;
  }
  EXPECT_EQ(imports, 1);
  // One GET of each blob (the config and the layer) for the eight steps.
  std::string log = proxy.log();
  std::map<std::string, int> gets;
  for (size_t at = log.find("/blobs/sha256:"); at != std::string::npos;
       at = log.find("/blobs/sha256:", at + 1))
    gets[log.substr(at + 7, 71)]++;
  EXPECT_EQ(gets.size(), 2u) << log;
  for (const auto& [digest, n] : gets) EXPECT_EQ(n, 1) << digest << "\n" << log;
  EXPECT_TRUE(partials(shared_).empty());
  EXPECT_EQ(fs::status(want).permissions() & fs::perms::all,
            fs::perms(0444));  // read-only: not even its owner changes it by mistake
  EXPECT_EQ(fs::status(want + ".json").permissions() & fs::perms::all, fs::perms(0444));
  auto sidecar = nlohmann::json::parse(slurp(want + ".json"));
  EXPECT_EQ(sidecar["image_digest"], manifest);
  EXPECT_TRUE(sidecar["inspect"].contains("facts")) << sidecar.dump(2);
  // Eight leases: prune removes nothing; after release it removes the entry.
  std::string ls = trainimg("cache ls --pyxis-cache " + shared_.string() + " --format json");
  auto j = nlohmann::json::parse(ls);
  ASSERT_EQ(j["entries"].size(), 1u) << ls;
  EXPECT_EQ(j["entries"][0]["leases"], 8) << ls;
  EXPECT_EQ(j["entries"][0]["trusted"], true) << ls;
  EXPECT_NE(trainimg("cache prune --pyxis-cache " + shared_.string() + " --max-size 0").find("1 leased"),
            std::string::npos);
  EXPECT_TRUE(fs::exists(want));
  for (int i = 0; i < 8; ++i) {
    EXPECT_EQ(importer(i, "release"), 0) << err(i);
    EXPECT_EQ(importer(i, "release"), 0) << err(i);
  }
  EXPECT_TRUE(fs::exists(want));  // release never removes a shared entry
  EXPECT_NE(
      trainimg("cache prune --pyxis-cache " + shared_.string() + " --max-size 0").find("removed 1 entries"),
      std::string::npos);
  EXPECT_FALSE(fs::exists(want));
  EXPECT_FALSE(fs::exists(want + ".json"));
}

TEST_F(PyxisCacheTest, AnImportKilledInTheMiddleBlocksNobody) {
  if (!need_registry()) GTEST_SKIP() << "no test registry (run .ci/start-registry.sh)";
  const std::string manifest = oci_layout(t_ / "img.oci", 200000);
  push(t_ / "img.oci", "test/pyxis-killed");
  FaultProxy proxy(5513, "slow", t_ / "proxy.log");
  const std::string ref = "get docker://127.0.0.1:5513/test/pyxis-killed:t";
  const std::string name = "sha256-" + manifest.substr(7) + "-zstd3-1M";
  std::string cmd = importer_cmd(0, ref) + " & echo $! >" + (t_ / "pid").string();
  ASSERT_EQ(std::system(cmd.c_str()), 0);
  pid_t first = std::stoi(slurp(t_ / "pid"));
  // Wait until it holds the entry's lock (it is importing), then kill it.
  const fs::path lock = shared_ / "locks" / (name + ".lock");
  bool held = false;
  for (int i = 0; i < 100 && !held; ++i) {
    int fd = ::open(lock.c_str(), O_RDONLY);
    if (fd >= 0) {
      held = flock(fd, LOCK_EX | LOCK_NB) != 0;
      ::close(fd);
    }
    if (!held) usleep(100000);
  }
  ASSERT_TRUE(held) << err(0);
  ASSERT_EQ(kill(first, SIGKILL), 0);
  // The next step imports it at once (the kernel dropped the lock); its
  // caller (timeout) exits with it, so its keeper drops its lease too.
  auto start = std::chrono::steady_clock::now();
  int st = std::system(importer_cmd(1, ref, "timeout 60 ").c_str());
  EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0) << err(1);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(40));
  EXPECT_EQ(out(1), (shared_ / (name + ".sqsh")).string() + "\n") << err(1);
  EXPECT_NE(err(1).find("pyxis cache: importing"), std::string::npos) << err(1);
  EXPECT_TRUE(partials(shared_).empty());
  bool gone = false;
  for (int i = 0; i < 50 && !gone; ++i) {
    gone = !fs::exists(shared_ / "leases" / (name + "@" + [] {
                         char h[256] = {};
                         gethostname(h, sizeof h - 1);
                         return std::string(h);
                       }() + ".1000.7.1"));
    if (!gone) usleep(100000);
  }
  EXPECT_TRUE(gone) << "the lease of a step whose caller exited is dropped";
}

TEST_F(PyxisCacheTest, ADigestMismatchLeavesNoFileNamedAfterTheDigestInAnyCache) {
  if (!need_registry()) GTEST_SKIP() << "no test registry (run .ci/start-registry.sh)";
  const std::string manifest = oci_layout(t_ / "img.oci", 100000);
  push(t_ / "img.oci", "test/pyxis-flipped");
  std::string hex = layer_.substr(7);
  fs::path stored =
      registry_state() + "/storage/docker/registry/v2/blobs/sha256/" + hex.substr(0, 2) + "/" + hex + "/data";
  std::string bytes = slurp(stored);
  ASSERT_FALSE(bytes.empty()) << stored;
  std::string flipped = bytes;
  flipped[flipped.size() / 2] ^= 0x20;
  std::ofstream(stored, std::ios::binary | std::ios::trunc) << flipped;
  int rc = importer(0, "get docker://" + anon_ + "/test/pyxis-flipped:t");
  std::ofstream(stored, std::ios::binary | std::ios::trunc) << bytes;
  EXPECT_EQ(rc, 2) << err(0);
  EXPECT_NE(err(0).find("blob " + layer_ + ": digest mismatch"), std::string::npos) << err(0);
  EXPECT_EQ(out(0), "");
  EXPECT_EQ(named_after(shared_, hex), std::vector<std::string>{});
  EXPECT_EQ(named_after(t_ / "blobs0", hex), std::vector<std::string>{});
  EXPECT_EQ(named_after(shared_, manifest.substr(7)), std::vector<std::string>{});
  EXPECT_TRUE(partials(shared_).empty());
}

TEST_F(PyxisCacheTest, AnEntryIsTrustedOnlyWhenItsSidecarNamesTheManifest) {
  const std::string manifest = oci_layout(t_ / "img.oci");
  const std::string uri = "get oci:" + (t_ / "img.oci").string();
  const fs::path entry = shared_ / ("sha256-" + manifest.substr(7) + "-zstd3-1M.sqsh");
  // Planted: a file under the entry's name whose sidecar names another image.
  put(entry, "not an image");
  put(entry.string() + ".json", R"({"image_digest":"sha256:)" + std::string(64, 'a') + R"("})");
  ASSERT_EQ(importer(0, uri), 0) << err(0);
  EXPECT_EQ(out(0), entry.string() + "\n");
  EXPECT_NE(err(0).find("pyxis cache: importing"), std::string::npos) << err(0);
  EXPECT_EQ(nlohmann::json::parse(slurp(entry.string() + ".json"))["image_digest"], manifest);
  // Trusted now: the next step reuses it.
  ASSERT_EQ(importer(1, uri), 0) << err(1);
  EXPECT_EQ(out(1), entry.string() + "\n");
  EXPECT_EQ(err(1).find("importing"), std::string::npos) << err(1);
  // A lease whose keeper died (a node gone, a killed process) is stale: prune
  // removes it, then the entry, which no other lease holds.
  const fs::path lease0 = shared_ / "leases" / (entry.stem().string() + "@" + host() + ".1000.7.0");
  const fs::path lease1 = shared_ / "leases" / (entry.stem().string() + "@" + host() + ".1000.7.1");
  ASSERT_EQ(importer(1, "release"), 0);
  EXPECT_FALSE(fs::exists(lease1));
  std::string text;
  for (int i = 0; i < 50 && text.find("keeper ") == std::string::npos; ++i, usleep(100000))
    text = slurp(lease0);
  ASSERT_NE(text.find("keeper "), std::string::npos) << text;
  ASSERT_EQ(kill(std::stoi(text.substr(text.find("keeper ") + 7)), SIGKILL), 0);
  usleep(200000);
  std::string pruned = trainimg("cache prune --pyxis-cache " + shared_.string() + " --max-size 0");
  EXPECT_NE(pruned.find("removed 1 entries"), std::string::npos) << pruned;
  EXPECT_NE(pruned.find("1 stale leases removed"), std::string::npos) << pruned;
  EXPECT_FALSE(fs::exists(entry));
  EXPECT_FALSE(fs::exists(lease0));
  // A dir: rootfs has no manifest digest: a private per-step file, as without the cache.
  ASSERT_EQ(importer(2, "get dir:" + (t_ / "rootfs").string()), 0) << err(2);
  EXPECT_EQ(out(2), (t_ / "rt/1000/7.2.sqsh").string() + "\n");
  EXPECT_EQ(importer(2, "release"), 0);
  EXPECT_FALSE(fs::exists(t_ / "rt/1000/7.2.sqsh"));
}

// Block reuse in the shared cache: a rebuilt image (bench/image_gen.py: the
// same two layers plus a new top one) imported after the first takes the
// first's blocks for the files of the shared layers, which it never fetches.
TEST_F(PyxisCacheTest, ARebuiltImageReusesTheBlocksOfTheEntryOfTheSameRepository) {
  if (!need_registry()) GTEST_SKIP() << "no test registry (run .ci/start-registry.sh)";
  const std::string gen = "python3 " + std::string(TRAINIMG_SOURCE_DIR) + "/bench/image_gen.py " +
                          (t_ / "v1").string() + " --files 300 --mb 3 --layers 2 --big-mb 1 --rebuild " +
                          (t_ / "v2").string() +
                          " --add-files 30 --add-mb 1 --change 5 --jobs 2 --tag t >/dev/null";
  ASSERT_EQ(std::system(gen.c_str()), 0) << gen;
  const std::string repo = "test/pyxis-reuse-" + std::to_string(getpid());
  std::string cmd =
      "skopeo copy --quiet --dest-tls-verify=false oci:" + (t_ / "v1").string() + ":t docker://" + anon_ +
      "/" + repo +
      ":v1 >/dev/null && skopeo copy --quiet --dest-tls-verify=false oci:" + (t_ / "v2").string() +
      ":t docker://" + anon_ + "/" + repo + ":v2 >/dev/null";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  ASSERT_EQ(importer(0, "get docker://" + anon_ + "/" + repo + ":v1"), 0) << err(0);
  const std::string v1 = out(0).substr(0, out(0).size() - 1);
  EXPECT_TRUE(fs::exists(v1 + ".index")) << v1;
  EXPECT_EQ(fs::status(v1 + ".index").permissions() & fs::perms::all, fs::perms(0444));
  ASSERT_EQ(importer(1, "get docker://" + anon_ + "/" + repo + ":v2"), 0) << err(1);
  const std::string v2 = out(1).substr(0, out(1).size() - 1);
  EXPECT_NE(err(1).find("may reuse the blocks of " + v1), std::string::npos) << err(1);
  auto reuse = nlohmann::json::parse(slurp(v2 + ".json"))["reuse"];
  EXPECT_EQ(reuse["from"], v1) << reuse.dump();
  EXPECT_EQ(reuse["shared_layers"], 2) << reuse.dump();
  EXPECT_GT(reuse["files"].get<int>(), 200) << reuse.dump();
  EXPECT_GE(reuse["layers_not_read"].get<int>(), 1) << reuse.dump();
  // Its step's blob cache holds no blob of a layer it did not read.
  auto manifest_of = [&](const fs::path& layout) {
    auto index = nlohmann::json::parse(slurp(layout / "index.json"));
    std::string d = index["manifests"][0]["digest"];
    return nlohmann::json::parse(slurp(layout / "blobs/sha256" / d.substr(7)));
  };
  auto m2 = manifest_of(t_ / "v2");
  EXPECT_TRUE(named_after(t_ / "blobs1", m2["layers"][0]["digest"].get<std::string>().substr(7)).empty());
  EXPECT_FALSE(named_after(t_ / "blobs1", m2["layers"][2]["digest"].get<std::string>().substr(7)).empty());
  // Pruned entries take their index along.
  ASSERT_EQ(importer(0, "release"), 0);
  ASSERT_EQ(importer(1, "release"), 0);
  std::string pruned = trainimg("cache prune --pyxis-cache " + shared_.string() + " --max-size 0");
  EXPECT_NE(pruned.find("removed 2 entries"), std::string::npos) << pruned;
  EXPECT_FALSE(fs::exists(v1 + ".index"));
  EXPECT_FALSE(fs::exists(v2 + ".index"));
}

}  // namespace
