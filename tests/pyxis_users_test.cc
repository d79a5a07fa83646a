// SPDX-License-Identifier: GPL-3.0-or-later
// Many users, one cache (issue 23): the shared .sqsh cache of the Pyxis
// importer (TRAINIMG_PYXIS_CACHE) and the blob cache (TRAINIMG_CACHE), used
// by two real unprivileged accounts (nobody and daemon, through setpriv)
// and root, as Pyxis runs the importer: as the job's user. No user can make
// another user's job use bytes they wrote. Needs root (to switch users):
// skipped otherwise, failed under TRAINIMG_CI=1.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "tests/cli_test_util.h"

namespace {

using trainimg::testing::put;
using trainimg::testing::slurp;
namespace fs = std::filesystem;

constexpr uid_t kA = 65534;  // nobody: the attacker
constexpr uid_t kB = 1;      // daemon: the victim

class PyxisUsers : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) {
      if (std::getenv("TRAINIMG_CI")) FAIL() << "the two-user tests need root (to run as nobody and daemon)";
      GTEST_SKIP() << "needs root to run the importer as two other users";
    }
    std::string tmpl = (fs::temp_directory_path() / "trainimg-pyxis-users-XXXXXX").string();
    ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
    t_ = tmpl;
    fs::permissions(t_, fs::perms(0755));
    for (const char* d : {"shared", "blobs", "rt"}) {
      fs::create_directories(t_ / d);
      fs::permissions(t_ / d, fs::perms(01777));
    }
    // The build directory may not be readable by other users: a copy of the binary.
    fs::create_directories(t_ / "bin");
    fs::copy_file(TRAINIMG_BIN, t_ / "bin/trainimg");
    fs::permissions(t_ / "bin/trainimg", fs::perms(0755));
    salt_ = std::to_string(getpid()) + "-" + ::testing::UnitTest::GetInstance()->current_test_info()->name();
    manifest_ = oci_layout(t_ / "img.oci", "genuine " + salt_);
    name_ = "sha256-" + manifest_.substr(7) + "-zstd3-1M";
  }
  void TearDown() override {
    if (t_.empty()) return;
    for (uid_t u : {uid_t(0), kA, kB}) run(u, 9, "pyxis-importer release");
    fs::remove_all(t_);
  }

  // A one-layer OCI layout whose /etc/os-release says `text`; its manifest digest.
  std::string oci_layout(const fs::path& out, const std::string& text) {
    fs::path root = t_ / ("rootfs-" + out.filename().string());
    put(root / "etc/os-release", "PRETTY_NAME=\"" + text + "\"\n");
    std::string script = R"SH(set -e
r="$1"; o="$2"; mkdir -p "$o/blobs/sha256"
tar -C "$r" --owner=0 --group=0 --numeric-owner --mtime=@1700000000 --sort=name -cf - . | gzip -n >"$o/layer.tgz"
D=$(tar -C "$r" --owner=0 --group=0 --numeric-owner --mtime=@1700000000 --sort=name -cf - . | sha256sum | cut -d' ' -f1)
blob() { d=$(sha256sum "$1" | cut -d' ' -f1); mv "$1" "$o/blobs/sha256/$d"; echo "$d $(stat -c %s "$o/blobs/sha256/$d")"; }
set -- $(blob "$o/layer.tgz"); L=$1; LS=$2
printf '{"architecture":"amd64","os":"linux","config":{"Env":["PATH=/usr/bin:/bin"]},"rootfs":{"type":"layers","diff_ids":["sha256:%s"]}}' $D >"$o/c.json"
set -- $(blob "$o/c.json"); C=$1; CS=$2
printf '{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json","config":{"mediaType":"application/vnd.oci.image.config.v1+json","digest":"sha256:%s","size":%s},"layers":[{"mediaType":"application/vnd.oci.image.layer.v1.tar+gzip","digest":"sha256:%s","size":%s}]}' $C $CS $L $LS >"$o/m.json"
set -- $(blob "$o/m.json"); M=$1
printf '{"schemaVersion":2,"manifests":[{"mediaType":"application/vnd.oci.image.manifest.v1+json","digest":"sha256:%s","size":%s,"annotations":{"org.opencontainers.image.ref.name":"t"}}]}' $M $(stat -c %s "$o/blobs/sha256/$M") >"$o/index.json"
printf '{"imageLayoutVersion":"1.0.0"}' >"$o/oci-layout"
chmod -R a+rX "$o"
echo "sha256:$M"
)SH";
    put(t_ / "oci.sh", script);
    std::string cmd = "sh '" + (t_ / "oci.sh").string() + "' '" + root.string() + "' '" + out.string() +
                      "' >'" + (t_ / "digest").string() + "'";
    EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
    std::string d = slurp(t_ / "digest");
    return d.substr(0, d.find('\n'));
  }

  // Runs `args` of trainimg as `uid` with Pyxis's environment for job 7 step
  // STEP; rc, stdout in out_, stderr in err_.
  int run(uid_t uid, int step, const std::string& args, const std::string& extra_env = "") {
    std::string u = std::to_string(uid);
    std::string cmd = (uid ? "setpriv --reuid=" + u + " --regid=" + u + " --clear-groups " : std::string()) +
                      "env -i PATH=/usr/bin:/bin PYXIS_RUNTIME_PATH=" + (t_ / "rt").string() +
                      " SLURM_JOB_UID=" + u + " SLURM_JOB_ID=7 SLURM_STEP_ID=" + std::to_string(step) +
                      " TRAINIMG_PREFLIGHT=off TRAINIMG_ALLOW_HTTP=1 no_proxy=127.0.0.1 TRAINIMG_CACHE=" +
                      (t_ / "blobs").string() + " TRAINIMG_PYXIS_CACHE=" + (t_ / "shared").string() + " " +
                      extra_env + " " + (t_ / "bin/trainimg").string() + " " + args + " >" +
                      (t_ / "out").string() + " 2>" + (t_ / "err").string();
    int st = std::system(cmd.c_str());
    out_ = slurp(t_ / "out");
    err_ = slurp(t_ / "err");
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  }
  // What `uid` can do to a file, as that user (0: it worked).
  int as(uid_t uid, const std::string& sh) {
    std::string u = std::to_string(uid);
    std::string cmd =
        "setpriv --reuid=" + u + " --regid=" + u + " --clear-groups sh -c '" + sh + "' 2>/dev/null";
    int st = std::system(cmd.c_str());
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  }
  std::string get_path(uid_t uid, int step) {
    EXPECT_EQ(run(uid, step, "pyxis-importer get oci:" + (t_ / "img.oci").string()), 0) << err_;
    return out_.empty() ? out_ : out_.substr(0, out_.size() - 1);
  }
  static uid_t owner(const std::string& p) {
    struct stat st {};
    return ::stat(p.c_str(), &st) == 0 ? st.st_uid : uid_t(-1);
  }
  std::string top() const { return (t_ / "shared" / (name_ + ".sqsh")).string(); }
  std::string area(uid_t u) const {
    return (t_ / "shared" / ("user-" + std::to_string(u)) / (name_ + ".sqsh")).string();
  }

  fs::path t_;
  std::string salt_, manifest_, name_, out_, err_;
};

TEST_F(PyxisUsers, AUserWhoAltersTheirEntryOrPlantsATopLevelOneCannotReachAnotherUsersJob) {
  // A imports first: into A's own area, not the top level (A is not trusted).
  const std::string a = get_path(kA, 0);
  EXPECT_EQ(a, area(kA)) << err_;
  EXPECT_EQ(owner(a), kA);
  EXPECT_FALSE(fs::exists(top()));
  const std::string genuine = slurp(a);
  ASSERT_GE(genuine.size(), 4096u);
  // A changes bytes of the file they own, and plants a forged top-level
  // entry with a sidecar copied from the genuine one (same name, size, digest).
  ASSERT_EQ(as(kA, "chmod u+w " + a + " && printf EVIL | dd of=" + a + " bs=1 seek=200 conv=notrunc"), 0);
  ASSERT_NE(slurp(a), genuine);
  ASSERT_EQ(as(kA, "cp " + a + " " + top() + " && cp " + a + ".json " + top() + ".json && chmod 0444 " +
                       top() + " " + top() + ".json"),
            0);
  ASSERT_EQ(owner(top()), kA);
  // B's job: neither A's area nor A's top-level file; B's own import, true bytes.
  const std::string b = get_path(kB, 1);
  EXPECT_EQ(b, area(kB)) << err_;
  EXPECT_NE(err_.find("pyxis cache: importing"), std::string::npos) << err_;
  EXPECT_EQ(slurp(b), genuine) << "B's job must run the image, not what A wrote";
  // B's second step uses B's entry without importing again.
  EXPECT_EQ(get_path(kB, 2), b);
  EXPECT_EQ(err_.find("importing"), std::string::npos) << err_;
  // Root (trusted) replaces A's forged top-level entry with a real one...
  const std::string r = get_path(0, 3);
  EXPECT_EQ(r, top()) << err_;
  EXPECT_EQ(owner(r), 0u);
  EXPECT_EQ(slurp(r), genuine);
  EXPECT_EQ(fs::status(r).permissions() & fs::perms::all, fs::perms(0444));
  // ...which B's next job uses, and which A can neither change nor replace.
  EXPECT_EQ(get_path(kB, 4), top());
  EXPECT_NE(as(kA, "printf EVIL >>" + r), 0);
  EXPECT_NE(as(kA, "mv " + r + " " + r + ".x"), 0);
  EXPECT_NE(as(kA, "rm -f " + r + ".json && test ! -e " + r + ".json"), 0);
  EXPECT_EQ(slurp(r), genuine);
  // The gate's facts come only from a sidecar the same rules trust: A's
  // altered entry is still A's alone.
  EXPECT_EQ(get_path(kA, 5), top()) << "A, too, uses the trusted top-level entry once there is one";
}

TEST_F(PyxisUsers, AnAccountTheSiteTrustsServesEveryUser) {
  const std::string trust = "TRAINIMG_PYXIS_CACHE_TRUST=user:nobody";
  ASSERT_EQ(run(kA, 0, "pyxis-importer get oci:" + (t_ / "img.oci").string(), trust), 0) << err_;
  EXPECT_EQ(out_, top() + "\n");
  EXPECT_EQ(owner(top()), kA);
  ASSERT_EQ(run(kB, 1, "pyxis-importer get oci:" + (t_ / "img.oci").string(), trust), 0) << err_;
  EXPECT_EQ(out_, top() + "\n");
  EXPECT_EQ(err_.find("importing"), std::string::npos) << err_;
  // Without the setting, B does not use nobody's file.
  EXPECT_EQ(get_path(kB, 2), area(kB));
  // A malformed setting is an error naming it, not a silent default.
  EXPECT_EQ(run(kB, 3, "pyxis-importer get oci:" + (t_ / "img.oci").string(),
                "TRAINIMG_PYXIS_CACHE_TRUST=user:no-such-user-x"),
            2);
  EXPECT_NE(err_.find("TRAINIMG_PYXIS_CACHE_TRUST: error: no user 'no-such-user-x'"), std::string::npos)
      << err_;
}

TEST_F(PyxisUsers, CiWarmsTheCacheAndVerifyCatchesAChangedEntry) {
  ASSERT_EQ(
      run(0, 0, "cache warm oci:" + (t_ / "img.oci").string() + " --pyxis-cache " + (t_ / "shared").string()),
      0)
      << err_;
  EXPECT_EQ(out_, top() + "\n");
  EXPECT_NE(err_.find("cache warm: imported"), std::string::npos) << err_;
  auto sidecar = nlohmann::json::parse(slurp(top() + ".json"));
  ASSERT_TRUE(sidecar["sqsh_sha256"].is_string()) << sidecar.dump(2);
  std::string sum = trainimg::testing::sh("sha256sum " + top() + " | cut -d' ' -f1").out;
  EXPECT_EQ(sidecar["sqsh_sha256"].get<std::string>(), "sha256:" + sum.substr(0, 64));
  // No lease left by the warm-up; the job's get uses it at once.
  EXPECT_TRUE(fs::is_empty(t_ / "shared/leases"));
  ASSERT_EQ(run(kB, 1, "pyxis-importer get oci:" + (t_ / "img.oci").string()), 0) << err_;
  EXPECT_EQ(out_, top() + "\n");
  EXPECT_EQ(err_.find("importing"), std::string::npos) << err_;
  ASSERT_EQ(run(0, 2, "cache verify --pyxis-cache " + (t_ / "shared").string()), 0) << out_ << err_;
  EXPECT_NE(out_.find("ok   " + top()), std::string::npos) << out_;
  // A second warm-up finds it.
  ASSERT_EQ(run(0, 3, "cache warm oci:" + (t_ / "img.oci").string()), 0) << err_;
  EXPECT_NE(err_.find("already cached"), std::string::npos) << err_;
  // A changed byte (root can write anything): verify says so, exit 1.
  ASSERT_EQ(std::system(("printf X | dd of=" + top() + " bs=1 seek=3000 conv=notrunc 2>/dev/null").c_str()),
            0);
  EXPECT_EQ(run(0, 4, "cache verify --pyxis-cache " + (t_ / "shared").string() + " --format json"), 1)
      << err_;
  auto v = nlohmann::json::parse(out_);
  ASSERT_EQ(v["entries"].size(), 1u) << out_;
  EXPECT_EQ(v["entries"][0]["ok"], false);
  EXPECT_NE(v["entries"][0]["problem"].get<std::string>().find("content changed"), std::string::npos) << out_;
  EXPECT_EQ(v["bad"], 1);
}

TEST_F(PyxisUsers, TheBatchStepIsNamedFromSlurmstepdAndReleaseFindsWhatGetMade) {
  // No SLURM_STEP_ID (Slurm sets none in the batch step): the parent's
  // title, as slurmstepd sets it, names the step.
  const std::string cmd = "exec -a \"slurmstepd: [7.batch]\" sh -c '" + (t_ / "bin/trainimg").string() +
                          " pyxis-importer get oci:" + (t_ / "img.oci").string() + " >" +
                          (t_ / "out").string() + " 2>" + (t_ / "err").string() + "; " +
                          (t_ / "bin/trainimg").string() +
                          " pyxis-importer get dir:" + (t_ / "rootfs-img.oci").string() + " >>" +
                          (t_ / "out").string() + " 2>>" + (t_ / "err").string() + "; true'";
  const std::string env = "env -i PATH=/usr/bin:/bin PYXIS_RUNTIME_PATH=" + (t_ / "rt").string() +
                          " SLURM_JOB_UID=0 SLURM_JOB_ID=7 SLURMD_NODENAME=nodeA TRAINIMG_PREFLIGHT=off"
                          " TRAINIMG_CACHE=" +
                          (t_ / "blobs").string() + " TRAINIMG_PYXIS_CACHE=" + (t_ / "shared").string() + " ";
  put(t_ / "batch.sh", cmd + "\n");
  ASSERT_EQ(std::system((env + "bash " + (t_ / "batch.sh").string()).c_str()), 0);
  EXPECT_EQ(slurp(t_ / "out"), top() + "\n" + (t_ / "rt/0/7.batch.sqsh").string() + "\n")
      << slurp(t_ / "err");
  EXPECT_TRUE(fs::exists(t_ / "shared/leases" / (name_ + "@nodeA.0.7.batch")));
  // Release in task cleanup: no SLURMD_NODENAME there; the lease is found by host.
  const std::string rel = "exec -a \"slurmstepd: [7.batch]\" sh -c '" + (t_ / "bin/trainimg").string() +
                          " pyxis-importer release; true'";
  put(t_ / "release.sh", rel + "\n");
  const std::string env2 =
      "env -i PATH=/usr/bin:/bin PYXIS_RUNTIME_PATH=" + (t_ / "rt").string() +
      " SLURM_JOB_UID=0 SLURM_JOB_ID=7 TRAINIMG_PYXIS_CACHE=" + (t_ / "shared").string() + " ";
  ASSERT_EQ(std::system((env2 + "bash " + (t_ / "release.sh").string()).c_str()), 0);
  EXPECT_FALSE(fs::exists(t_ / "rt/0/7.batch.sqsh"));
  EXPECT_TRUE(fs::is_empty(t_ / "shared/leases"));
  EXPECT_TRUE(fs::exists(top())) << "release never removes a shared entry";
}

// The blob cache of docker:// sources, one directory for every user.
TEST_F(PyxisUsers, OneBlobCacheServesManyUsersAndNobodyReadsAnotherUsersBlobs) {
  if (std::system("curl -s -o /dev/null --max-time 2 http://127.0.0.1:5500/v2/") != 0) {
    if (std::getenv("TRAINIMG_CI")) FAIL() << "the test registry is not running (.ci/start-registry.sh)";
    GTEST_SKIP() << "no test registry (run .ci/start-registry.sh)";
  }
  oci_layout(t_ / "two.oci", "second " + salt_);
  auto layer_of = [&](const fs::path& layout) {
    auto index = nlohmann::json::parse(slurp(layout / "index.json"));
    std::string m = index["manifests"][0]["digest"];
    auto manifest = nlohmann::json::parse(slurp(layout / "blobs/sha256" / m.substr(7)));
    return manifest["layers"][0]["digest"].get<std::string>().substr(7);
  };
  const std::string one = "127.0.0.1:5500/test/users-one-" + salt_.substr(0, salt_.find('-')) + ":t";
  const std::string two = "127.0.0.1:5500/test/users-two-" + salt_.substr(0, salt_.find('-')) + ":t";
  for (auto [layout, ref] : {std::pair{t_ / "img.oci", one}, std::pair{t_ / "two.oci", two}})
    ASSERT_EQ(std::system(("skopeo copy --quiet --dest-tls-verify=false oci:" + layout.string() +
                           ":t docker://" + ref + " >/dev/null")
                              .c_str()),
              0);
  fs::create_directories(t_ / "images");
  fs::permissions(t_ / "images", fs::perms(01777));
  auto import = [&](uid_t u, const std::string& ref, const std::string& cache, const std::string& out) {
    return run(u, 0, "import docker://" + ref + " -o " + (t_ / "images" / out).string(),
               "TRAINIMG_CACHE=" + (t_ / cache).string());
  };
  // Root fills the cache (its top level); B imports another image into its
  // own area, and the first one from root's blobs without a copy of its own.
  ASSERT_EQ(import(0, one, "blobs", "root.sqsh"), 0) << err_;
  EXPECT_TRUE(fs::exists(t_ / "blobs/blobs/sha256" / layer_of(t_ / "img.oci")));
  ASSERT_EQ(import(kB, two, "blobs", "b2.sqsh"), 0) << err_;
  const fs::path b_area = t_ / ("blobs/user-" + std::to_string(kB));
  EXPECT_TRUE(fs::exists(b_area / "blobs/sha256" / layer_of(t_ / "two.oci")));
  ASSERT_EQ(import(kB, one, "blobs", "b1.sqsh"), 0) << err_;
  EXPECT_FALSE(fs::exists(b_area / "blobs/sha256" / layer_of(t_ / "img.oci")));
  EXPECT_EQ(slurp(t_ / "images/b1.sqsh"), slurp(t_ / "images/root.sqsh"));
  // A made the cache's top-level directories first and planted a blob under
  // the layer's digest: B neither uses it nor fails; B's image is the true one.
  fs::create_directories(t_ / "blobs2");
  fs::permissions(t_ / "blobs2", fs::perms(01777));
  const std::string planted = (t_ / "blobs2/blobs/sha256" / layer_of(t_ / "img.oci")).string();
  ASSERT_EQ(as(kA, "mkdir -p " + (t_ / "blobs2/blobs/sha256").string() + " && cp " +
                       (t_ / "two.oci/blobs/sha256" / layer_of(t_ / "two.oci")).string() + " " + planted),
            0);
  ASSERT_EQ(import(kB, one, "blobs2", "b1-again.sqsh"), 0) << err_;
  EXPECT_EQ(slurp(t_ / "images/b1-again.sqsh"), slurp(t_ / "images/root.sqsh"));
  EXPECT_TRUE(
      fs::exists(t_ / ("blobs2/user-" + std::to_string(kB)) / "blobs/sha256" / layer_of(t_ / "img.oci")));
  // A cache directory B may not write (root's, 0755): the real errno, with the path.
  fs::create_directories(t_ / "blobs3");
  EXPECT_EQ(import(kB, two, "blobs3", "b3.sqsh"), 2);
  EXPECT_NE(err_.find("Permission denied"), std::string::npos) << err_;
  EXPECT_NE(err_.find((t_ / "blobs3").string()), std::string::npos) << err_;
  EXPECT_FALSE(fs::exists(t_ / "images/b3.sqsh"));
}

}  // namespace
