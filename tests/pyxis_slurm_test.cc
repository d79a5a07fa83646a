// SPDX-License-Identifier: GPL-3.0-or-later
// `trainimg pyxis-importer` as the importer= of a real Pyxis 0.24.0 with a
// real Enroot 4.1.2 on a real Slurm 22.05 cluster: .ci/start-pyxis.sh (two
// `slurmd -N pyxis1|pyxis2` on this machine; its state file names
// SLURM_CONF and the directory with the importer wrapper, the shared cache
// and the site file). The test installs this build's binary where the
// wrapper runs it (DIR/bin/trainimg). Images: busybox trees with an
// os-release of this run's own, pushed to the test registry
// (127.0.0.1:5500), so every run starts from a cold cache. Jobs run as root
// and as the test users trainimg-u1 and trainimg-u2. Skipped without the
// stack, a failure under TRAINIMG_CI=1.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "tests/cli_test_util.h"

namespace {

namespace fs = std::filesystem;

using trainimg::testing::CliResult;
using trainimg::testing::put;
using trainimg::testing::sh;
using trainimg::testing::slurp;
using trainimg::testing::SplitResult;

const char* kUserA = "trainimg-u1";
const char* kUserB = "trainimg-u2";

// A one-layer OCI layout of ROOT (gzip, fixed mtimes), pushed to REF.
const char* kPushScript = R"SH(set -e
r="$1"; o="$2"; ref="$3"; rm -rf "$o"; mkdir -p "$o/blobs/sha256"
tar -C "$r" --owner=0 --group=0 --numeric-owner --mtime=@1700000000 --sort=name -cf "$o/layer.tar" .
D=$(sha256sum "$o/layer.tar" | cut -d' ' -f1); gzip -n "$o/layer.tar"
blob() { d=$(sha256sum "$1" | cut -d' ' -f1); mv "$1" "$o/blobs/sha256/$d"; echo "$d $(stat -c %s "$o/blobs/sha256/$d")"; }
set -- $(blob "$o/layer.tar.gz"); L=$1; LS=$2
printf '{"architecture":"amd64","os":"linux","config":{"Env":["PATH=/bin:/usr/bin"],"Cmd":["/bin/sh"]},"rootfs":{"type":"layers","diff_ids":["sha256:%s"]}}' $D >"$o/c.json"
set -- $(blob "$o/c.json"); C=$1; CS=$2
printf '{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json","config":{"mediaType":"application/vnd.oci.image.config.v1+json","digest":"sha256:%s","size":%s},"layers":[{"mediaType":"application/vnd.oci.image.layer.v1.tar+gzip","digest":"sha256:%s","size":%s}]}' $C $CS $L $LS >"$o/m.json"
set -- $(blob "$o/m.json"); M=$1; MS=$2
printf '{"schemaVersion":2,"manifests":[{"mediaType":"application/vnd.oci.image.manifest.v1+json","digest":"sha256:%s","size":%s,"annotations":{"org.opencontainers.image.ref.name":"t"}}]}' $M $MS >"$o/index.json"
printf '{"imageLayoutVersion":"1.0.0"}' >"$o/oci-layout"
skopeo copy --quiet --dest-tls-verify=false "oci:$o:t" "docker://$ref"
skopeo inspect --tls-verify=false --format '{{.Digest}}' "docker://$ref"
)SH";

class PyxisSlurm : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    const char* st = std::getenv("TRAINIMG_PYXIS_STATE");
    std::istringstream in(slurp(st ? st : "/tmp/trainimg-ci-pyxis.env"));
    for (std::string l; std::getline(in, l);) {
      if (l.starts_with("SLURM_CONF=")) conf_ = l.substr(11);
      if (l.starts_with("TRAINIMG_PYXIS_DIR=")) dir_ = l.substr(19);
    }
    if (conf_.empty() || !fs::exists(conf_)) {
      conf_.clear();
      return;
    }
    // The wrapper runs DIR/bin/trainimg: the job users may not read the
    // build directory. Replaced through a rename (a running import keeps its file).
    fs::path tmp = fs::path(dir_) / "bin" / ("trainimg.new." + std::to_string(::getpid()));
    fs::copy_file(TRAINIMG_BIN, tmp, fs::copy_options::overwrite_existing);
    fs::permissions(tmp, fs::perms(0755));
    fs::rename(tmp, fs::path(dir_) / "bin/trainimg");
  }

  void SetUp() override {
    if (conf_.empty()) {
      if (std::getenv("TRAINIMG_CI")) FAIL() << "no Pyxis cluster: .ci/start-pyxis.sh did not run or failed";
      GTEST_SKIP() << "no Pyxis cluster (.ci/start-pyxis.sh)";
    }
    if (::geteuid() != 0) GTEST_SKIP() << "runs jobs as the test users: needs root";
    if (std::system("curl -s -o /dev/null --max-time 2 http://127.0.0.1:5500/v2/") != 0) {
      if (std::getenv("TRAINIMG_CI")) FAIL() << "the test registry is not running (.ci/start-registry.sh)";
      GTEST_SKIP() << "no test registry (.ci/start-registry.sh)";
    }
    std::string tmpl = (fs::temp_directory_path() / "trainimg-pyxis-slurm-XXXXXX").string();
    ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
    t_ = tmpl;
    fs::permissions(t_, fs::perms(0755));
    salt_ = std::to_string(::getpid()) + "-" + std::to_string(std::time(nullptr));
    set_mode("importer");
    fs::remove(fs::path(dir_) / "site.env");
    slurm("scontrol update NodeName=pyxis[1-2] State=RESUME >/dev/null 2>&1");
    wait_idle();
  }
  void TearDown() override {
    if (conf_.empty()) return;
    set_mode("importer");
    fs::remove(fs::path(dir_) / "site.env");
    if (!t_.empty()) fs::remove_all(t_);
  }

  CliResult slurm(const std::string& cmd) const { return sh("SLURM_CONF=" + conf_ + " " + cmd + " 2>&1"); }
  void set_mode(const std::string& mode) const {
    std::string cmd = std::string(TRAINIMG_SOURCE_DIR) + "/.ci/start-pyxis.sh mode " + mode + " >/dev/null";
    ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  }
  void wait_idle() const {
    for (int i = 0; i < 100; ++i) {
      std::istringstream in(slurm("sinfo -h -N -o %T").out);
      int idle = 0;
      for (std::string l; std::getline(in, l);) idle += l == "idle";
      if (idle == 2) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(300));
    }
    ADD_FAILURE() << "the Pyxis nodes are not idle: " << slurm("sinfo -N").out;
  }

  // `srun ARGS` as USER (root when empty), stdout and stderr apart; a
  // unique job name and a time limit, killed after 180 s.
  SplitResult srun(const std::string& user, const std::string& args) {
    std::string as = user.empty() ? "" : "runuser -u " + user + " -- ";
    std::string cmd = "cd / && " + as + "env SLURM_CONF=" + conf_ + " timeout 180 srun -J trainimg-pyxis-" +
                      salt_ + "-" + std::to_string(++jobs_) + " -t 5 --immediate=60 " + args;
    return trainimg::testing::sh_split(cmd, t_);
  }

  // An image with busybox and an os-release naming NAME (and this run),
  // pushed as trainimg-ci/pyxis-slurm:SALT-NAME. Returns the reference as
  // Pyxis takes it; its manifest digest in `digest`.
  std::string busybox_image(const std::string& name, std::string* digest = nullptr,
                            const std::string& pretty = "") {
    fs::path root = t_ / ("root-" + name);
    fs::create_directories(root / "bin");
    fs::copy_file("/bin/busybox", root / "bin/busybox");
    for (const char* tool : {"sh", "cat", "grep", "echo", "id", "sleep", "ls"})
      fs::create_symlink("busybox", root / "bin" / tool);
    put(root / "etc/os-release",
        "PRETTY_NAME=\"" + (pretty.empty() ? "trainimg pyxis test " + name + " " + salt_ : pretty) + "\"\n");
    return push(root, name, digest);
  }
  std::string push(const fs::path& root, const std::string& name, std::string* digest) {
    put(t_ / "push.sh", kPushScript);
    std::string ref = "127.0.0.1:5500/trainimg-ci/pyxis-slurm:" + salt_ + "-" + name;
    CliResult r = sh("sh '" + (t_ / "push.sh").string() + "' '" + root.string() + "' '" +
                     (t_ / ("oci-" + name)).string() + "' '" + ref + "' 2>&1");
    EXPECT_EQ(r.rc, 0) << r.out;
    if (digest) *digest = r.out.substr(0, r.out.find('\n'));
    return "127.0.0.1:5500#trainimg-ci/pyxis-slurm:" + salt_ + "-" + name;
  }
  std::string pretty(const std::string& name) const {
    return "PRETTY_NAME=\"trainimg pyxis test " + name + " " + salt_ + "\"";
  }

  fs::path cache() const { return fs::path(dir_) / "cache"; }
  // Every .sqsh under the shared cache whose name holds the digest's hex.
  std::vector<fs::path> entries(const std::string& digest) const {
    std::vector<fs::path> out;
    std::string hex = digest.substr(digest.find(':') + 1);
    for (const auto& e : fs::recursive_directory_iterator(cache()))
      if (e.path().extension() == ".sqsh" && e.path().filename().string().find(hex) != std::string::npos)
        out.push_back(e.path());
    return out;
  }
  // Leases left in the cache and per-step files left under Pyxis's runtime
  // path, after the step's cleanup had up to 15 s.
  std::string leftovers() const {
    std::string left;
    for (int i = 0; i < 50; ++i) {
      left.clear();
      for (const auto& e : fs::recursive_directory_iterator(cache()))
        if (e.is_regular_file() && e.path().parent_path().filename() == "leases")
          left += e.path().string() + "\n";
      for (const auto& e : fs::recursive_directory_iterator(fs::path(dir_) / "run"))
        if (e.is_regular_file() && e.path().filename().string().starts_with(std::to_string(last_job_) + "."))
          left += e.path().string() + "\n";
      if (left.empty()) return left;
      std::this_thread::sleep_for(std::chrono::milliseconds(300));
    }
    return left;
  }
  static uid_t uid(const std::string& user) { return std::stoul(sh("id -u " + user).out); }

  static inline std::string conf_, dir_;
  fs::path t_;
  std::string salt_;
  int jobs_ = 0;
  long last_job_ = -1;
};

// One ctest test for the cluster: the scenarios share its two nodes, its
// cache and its plugstack.conf (the squashfuse scenario switches it).
class PyxisSlurmScenarios : public PyxisSlurm {
 protected:
  void ColdThenWarmOnTwoNodesImportsOnce();
  void SbatchRunsTheBatchStepInTheContainerAndLeavesNothing();
  void AnotherUsersAlteredOrForgedEntryIsNeverServed(bool warmed_by_root);
  void TheGateRefusesAMismatchingImageWithItsRuleOnSrunsStderr();
  void UseSquashfuseRunsFromTheReturnedSqsh();
};

void PyxisSlurmScenarios::ColdThenWarmOnTwoNodesImportsOnce() {
  std::string digest;
  std::string img = busybox_image("coldwarm", &digest);
  const std::string task =
      "sh -c 'echo node=$SLURMD_NODENAME job=$SLURM_JOB_ID; grep PRETTY_NAME /etc/os-release'";
  auto t0 = std::chrono::steady_clock::now();
  SplitResult cold = srun("", "-N2 -w pyxis[1-2] --container-image='" + img + "' " + task);
  double cold_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_EQ(cold.rc, 0) << cold.out << cold.err;
  for (const char* node : {"node=pyxis1", "node=pyxis2"})
    EXPECT_NE(cold.out.find(node), std::string::npos) << cold.out;
  size_t first = cold.out.find(pretty("coldwarm"));
  ASSERT_NE(first, std::string::npos) << cold.out;
  EXPECT_NE(cold.out.find(pretty("coldwarm"), first + 1), std::string::npos) << cold.out;  // both nodes
  std::vector<fs::path> e = entries(digest);
  ASSERT_EQ(e.size(), 1u) << "one import for both nodes";
  struct stat before {};
  ASSERT_EQ(::stat(e[0].c_str(), &before), 0);
  last_job_ = std::stol(cold.out.substr(cold.out.find("job=") + 4));
  EXPECT_EQ(leftovers(), "");

  t0 = std::chrono::steady_clock::now();
  SplitResult warm = srun("", "-N2 -w pyxis[1-2] --container-image='docker://" + img + "' " + task);
  double warm_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::cerr << "srun -N2 busybox: cold " << cold_s << " s, warm " << warm_s << " s\n";
  ASSERT_EQ(warm.rc, 0) << warm.out << warm.err;
  first = warm.out.find(pretty("coldwarm"));
  ASSERT_NE(first, std::string::npos) << warm.out;
  EXPECT_NE(warm.out.find(pretty("coldwarm"), first + 1), std::string::npos) << warm.out;
  ASSERT_EQ(entries(digest).size(), 1u);
  struct stat after {};
  ASSERT_EQ(::stat(e[0].c_str(), &after), 0);
  EXPECT_EQ(after.st_ino, before.st_ino) << "the warm run imported again";
  EXPECT_EQ(after.st_mtim.tv_sec, before.st_mtim.tv_sec);
  last_job_ = std::stol(warm.out.substr(warm.out.find("job=") + 4));
  EXPECT_EQ(leftovers(), "");
}

void PyxisSlurmScenarios::SbatchRunsTheBatchStepInTheContainerAndLeavesNothing() {
  std::string img = busybox_image("batch");
  put(t_ / "job.sh", "#!/bin/sh\necho job=$SLURM_JOB_ID step=batch\ngrep PRETTY_NAME /etc/os-release\n");
  fs::path out = t_ / "batch.out";
  std::string cmd = "cd / && SLURM_CONF=" + conf_ + " timeout 180 sbatch --wait -J trainimg-pyxis-" + salt_ +
                    "-batch -t 5 -w pyxis1 -o '" + out.string() + "' --container-image='" + img + "' '" +
                    (t_ / "job.sh").string() + "'";
  SplitResult r = trainimg::testing::sh_split(cmd, t_);
  std::string text = slurp(out);
  EXPECT_EQ(r.rc, 0) << r.out << r.err << text;
  EXPECT_NE(text.find(pretty("batch")), std::string::npos) << text;
  if (text.find("job=") != std::string::npos) last_job_ = std::stol(text.substr(text.find("job=") + 4));
  EXPECT_EQ(leftovers(), "");
}

// User A owns what A's import wrote; A alters every .sqsh of its own in the
// cache and plants an entry under the shared name (a real squashfs of a
// forged image, with a sidecar copied from a genuine one that vouches for
// it). User B's job must run the true image. `warmed_by_root`: root's
// `cache warm` made the entry first (0444, root's: A cannot touch it).
void PyxisSlurmScenarios::AnotherUsersAlteredOrForgedEntryIsNeverServed(bool warmed_by_root) {
  const std::string name = warmed_by_root ? "warmed" : "usersfirst";
  std::string digest;
  std::string img = busybox_image(name, &digest);
  const std::string hex = digest.substr(digest.find(':') + 1);
  const fs::path shared = cache() / ("sha256-" + hex + "-zstd3-1M.sqsh");
  std::string warmed_sum;
  if (warmed_by_root) {
    CliResult w =
        sh("TRAINIMG_ALLOW_HTTP=1 TRAINIMG_CACHE='" + (t_ / "blobs").string() + "' " + TRAINIMG_BIN +
           " cache warm 'docker://" + img + "' --pyxis-cache '" + cache().string() + "' 2>&1");
    ASSERT_EQ(w.rc, 0) << w.out;
    ASSERT_TRUE(fs::exists(shared)) << w.out;
    struct stat st {};
    ASSERT_EQ(::stat(shared.c_str(), &st), 0);
    EXPECT_EQ(st.st_uid, 0u);
    EXPECT_EQ(st.st_mode & 07777, 0444u);
    warmed_sum = sh("sha256sum '" + shared.string() + "'").out;
  }
  SplitResult a = srun(kUserA, "-w pyxis1 --container-image='" + img + "' cat /etc/os-release");
  ASSERT_EQ(a.rc, 0) << a.out << a.err;
  EXPECT_NE(a.out.find(pretty(name)), std::string::npos) << a.out;

  // A's attack: every .sqsh A owns, altered in place (4 KiB in the middle).
  std::string mine = sh("find '" + cache().string() + "' -user " + kUserA + " -name '*.sqsh'").out;
  std::istringstream files(mine);
  for (std::string f; std::getline(files, f);) {
    std::string alter = "runuser -u " + std::string(kUserA) +
                        " -- sh -c 'chmod u+w \"$0\"; head -c 4096 /dev/zero | tr \"\\0\" X | dd of=\"$0\" "
                        "bs=4096 seek=$(($(stat -c %s \"$0\") / 8192)) conv=notrunc 2>/dev/null' '" +
                        f + "'";
    EXPECT_EQ(sh(alter).rc, 0) << alter;
  }
  // …and tries the same on root's warmed entry: refused.
  if (warmed_by_root) {
    CliResult w = sh("runuser -u " + std::string(kUserA) + " -- sh -c 'echo X >>\"$0\"' '" + shared.string() +
                     "' 2>&1");
    EXPECT_NE(w.rc, 0) << w.out;
    EXPECT_EQ(sh("sha256sum '" + shared.string() + "'").out, warmed_sum);
  }
  // A forged entry under the shared name, when nobody made it yet.
  if (!fs::exists(shared)) {
    std::string forged_img = busybox_image(name + "-forged", nullptr, "FORGED");
    fs::path forged = t_ / "forged.sqsh";
    CliResult f =
        sh("TRAINIMG_ALLOW_HTTP=1 TRAINIMG_CACHE='" + (t_ / "blobs").string() + "' " + TRAINIMG_BIN +
           " import 'docker://" + forged_img + "' -o '" + forged.string() + "' 2>&1");
    ASSERT_EQ(f.rc, 0) << f.out;
    std::vector<fs::path> genuine = entries(digest);
    ASSERT_FALSE(genuine.empty());
    auto side = nlohmann::ordered_json::parse(slurp(genuine[0].string() + ".json"));
    side["image"] = shared.string();
    side["sizes"]["image_bytes"] = fs::file_size(forged);
    fs::copy_file(forged, shared);
    put(shared.string() + ".json", side.dump(2));
    uid_t ua = uid(kUserA);
    for (const fs::path& p : {shared, fs::path(shared.string() + ".json")}) {
      ASSERT_EQ(::chown(p.c_str(), ua, ua), 0);
      fs::permissions(p, fs::perms(0644));
    }
  }

  SplitResult b = srun(kUserB, "-w pyxis2 --container-image='" + img + "' cat /etc/os-release");
  EXPECT_EQ(b.rc, 0) << b.out << b.err;
  EXPECT_NE(b.out.find(pretty(name)), std::string::npos) << b.out << b.err;
  EXPECT_EQ(b.out.find("FORGED"), std::string::npos) << b.out;
  // B again, on the other node (a warm entry now): still the true image.
  SplitResult b2 = srun(kUserB, "-w pyxis1 --container-image='" + img + "' cat /etc/os-release");
  EXPECT_EQ(b2.rc, 0) << b2.out << b2.err;
  EXPECT_NE(b2.out.find(pretty(name)), std::string::npos) << b2.out << b2.err;
  if (warmed_by_root) {
    EXPECT_EQ(sh("sha256sum '" + shared.string() + "'").out, warmed_sum);
  }
}

// The image gate: the site's host profile (the P6-B200 seed node, EFA
// installer 1.50.0) and TRAINIMG_PREFLIGHT=error from the site file; an
// image with installer 1.47.0. The job's own TRAINIMG_PREFLIGHT=off does
// not reach the gate.
void PyxisSlurmScenarios::TheGateRefusesAMismatchingImageWithItsRuleOnSrunsStderr() {
  fs::path root = t_ / "root-efa";
  put(root / "opt/amazon/efa_installed_packages",
      "# EFA installer version: 1.47.0\n# Debug packages installed: no\n"
      "libfabric1-aws_2.6.0amzn1.0_amd64 libnccl-ofi-ngc-v3_1.21.1-1_amd64\n");
  put(root / "opt/amazon/efa/lib/pkgconfig/libfabric.pc", "Name: libfabric\nVersion: 2.6.0amzn1.0\n");
  auto cc = [&](const fs::path& out, const std::string& src, const std::string& flags) {
    fs::create_directories(out.parent_path());
    put(t_ / "src.c", src);
    std::string cmd =
        "gcc -shared -fPIC -o '" + out.string() + "' '" + (t_ / "src.c").string() + "' " + flags;
    ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  };
  cc(root / "opt/amazon/efa/lib/libfabric.so.1", "int fi_getinfo = 1;\n", "-Wl,-soname,libfabric.so.1");
  cc(root / "opt/amazon/ofi-nccl/lib/libnccl-net-ofi.so",
     "int ncclNetPlugin_v8 = 1; int ncclNetPlugin_v9 = 1;\n"
     "__attribute__((used)) static const char s[] = \"NET/OFI Initializing aws-ofi-nccl 1.21.1\";\n",
     "-Wl,-soname,libnccl-net-ofi.so '-Wl,-rpath,/opt/amazon/efa/lib' -Wl,--enable-new-dtags");
  cc(root / "usr/lib/x86_64-linux-gnu/libnccl.so.2.30.7", "int ncclGetVersion = 1;\n",
     "-Wl,-soname,libnccl.so.2");
  fs::create_symlink("libnccl.so.2.30.7", root / "usr/lib/x86_64-linux-gnu/libnccl.so.2");
  put(root / "etc/ld.so.conf.d/efa.conf", "/opt/amazon/efa/lib\n");
  fs::create_directories(root / "bin");
  fs::copy_file("/bin/busybox", root / "bin/busybox");
  for (const char* tool : {"sh", "true"}) fs::create_symlink("busybox", root / "bin" / tool);
  std::string img = push(root, "efa-1.47.0", nullptr);

  fs::path profile = fs::path(dir_) / ("host-" + salt_ + ".json");
  CliResult cap = sh(std::string(TRAINIMG_BIN) + " host capture --from " + TRAINIMG_SOURCE_DIR +
                     "/tests/fixtures/host/p6-b200 -o '" + profile.string() + "' 2>&1");
  ASSERT_EQ(cap.rc, 0) << cap.out;
  fs::permissions(profile, fs::perms(0644));
  put(fs::path(dir_) / "site.env",
      "TRAINIMG_HOST_PROFILE=" + profile.string() + "\nTRAINIMG_PREFLIGHT=error\n");
  const std::string refused =
      "trainimg: efa-host-mismatch: image EFA installer 1.47.0 differs from the host's 1.50.0";
  for (const std::string& user : {std::string(), std::string(kUserA)}) {
    SplitResult r =
        srun(user, "--export=ALL,TRAINIMG_PREFLIGHT=off -w pyxis1 --container-image='" + img + "' true");
    EXPECT_NE(r.rc, 0) << user << ": " << r.out << r.err;
    EXPECT_NE(r.err.find(refused), std::string::npos) << user << ": " << r.err;
    EXPECT_EQ(r.out, "");
  }
  // Near miss: policy warn from the site file lets the same job run.
  put(fs::path(dir_) / "site.env",
      "TRAINIMG_HOST_PROFILE=" + profile.string() + "\nTRAINIMG_PREFLIGHT=warn\n");
  SplitResult warn = srun("", "-w pyxis1 --container-image='" + img + "' true");
  EXPECT_EQ(warn.rc, 0) << warn.out << warn.err;
  fs::remove(fs::path(dir_) / "site.env");
  fs::remove(profile);
}

// plugstack.conf with use_squashfuse=1: Pyxis starts the container from the
// .sqsh the importer returned (enroot start IMAGE.sqsh, squashfuse) instead
// of unpacking it with `enroot create`.
void PyxisSlurmScenarios::UseSquashfuseRunsFromTheReturnedSqsh() {
  std::string digest;
  std::string img = busybox_image("squashfuse", &digest);
  set_mode("squashfuse");
  SplitResult r = srun(
      "", "-w pyxis1 --container-image='" + img + "' sh -c 'echo job=$SLURM_JOB_ID; cat /etc/os-release'");
  EXPECT_EQ(r.rc, 0) << r.out << r.err;
  EXPECT_NE(r.out.find(pretty("squashfuse")), std::string::npos) << r.out << r.err;
  std::string log = slurp(fs::path(dir_) / "log/slurmd.pyxis1.log");
  EXPECT_NE(log.find("pyxis: starting container from squashfs: " + cache().string()), std::string::npos)
      << "not started from the shared entry";
  if (r.out.find("job=") != std::string::npos) last_job_ = std::stol(r.out.substr(r.out.find("job=") + 4));
  EXPECT_EQ(leftovers(), "");
  // A job user mounts through /dev/fuse: that needs the device open to
  // others (0666, the distributions' udev default). Where it is not (a
  // container's /dev), Enroot says so and the job fails; both are checked.
  struct stat fuse {};
  bool fuse_for_users = ::stat("/dev/fuse", &fuse) == 0 && (fuse.st_mode & 0006) == 0006;
  SplitResult u = srun(kUserA, "-w pyxis2 --container-image='" + img + "' cat /etc/os-release");
  if (fuse_for_users) {
    EXPECT_EQ(u.rc, 0) << u.out << u.err;
    EXPECT_NE(u.out.find(pretty("squashfuse")), std::string::npos) << u.out << u.err;
  } else {
    std::cerr << "note: use_squashfuse=1 for a job user needs /dev/fuse open to others; here it is mode "
              << std::oct << (fuse.st_mode & 07777) << std::dec << ": only root's job ran from the .sqsh\n";
    EXPECT_NE(u.rc, 0);
    EXPECT_NE(u.err.find("fuse: failed to open /dev/fuse: Permission denied"), std::string::npos) << u.err;
  }
  set_mode("importer");
}

TEST_F(PyxisSlurmScenarios, ImporterOnARealPyxisEnrootSlurmCluster) {
  {
    SCOPED_TRACE("ColdThenWarmOnTwoNodesImportsOnce");
    ColdThenWarmOnTwoNodesImportsOnce();
  }
  wait_idle();
  {
    SCOPED_TRACE("SbatchRunsTheBatchStepInTheContainerAndLeavesNothing");
    SbatchRunsTheBatchStepInTheContainerAndLeavesNothing();
  }
  wait_idle();
  {
    SCOPED_TRACE("AnotherUsersAlteredOrForgedEntryIsNeverServed (users first)");
    AnotherUsersAlteredOrForgedEntryIsNeverServed(false);
  }
  wait_idle();
  {
    SCOPED_TRACE("AnotherUsersAlteredOrForgedEntryIsNeverServed (warmed by root)");
    AnotherUsersAlteredOrForgedEntryIsNeverServed(true);
  }
  wait_idle();
  {
    SCOPED_TRACE("TheGateRefusesAMismatchingImageWithItsRuleOnSrunsStderr");
    TheGateRefusesAMismatchingImageWithItsRuleOnSrunsStderr();
  }
  wait_idle();
  {
    SCOPED_TRACE("UseSquashfuseRunsFromTheReturnedSqsh");
    UseSquashfuseRunsFromTheReturnedSqsh();
  }
}

}  // namespace
