// SPDX-License-Identifier: GPL-3.0-or-later
// The image gate at job start: `trainimg pyxis-importer get URI` driven as
// Pyxis 0.24 drives its importer= (environment: PYXIS_RUNTIME_PATH,
// PYXIS_VERSION, SLURM_JOB_UID/ID, SLURM_STEP_ID; first stdout line = the
// .sqsh path; non-zero exit = the step fails with stderr; `release` twice).
// Images: OCI layouts written here with the seed 002 EFA stack (installer
// 1.50.0: matches the seed 000 node; 1.47.0: does not). The node
// profile is the P6-B200 seed fixture captured from its bundle.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/cli_test_util.h"

namespace {

using trainimg::testing::put;
using trainimg::testing::slurp;

namespace fs = std::filesystem;

using CmdRun = trainimg::testing::SplitResult;

class PyxisGate : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / "trainimg-pyxis-gate-XXXXXX").string();
    ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
    t_ = tmpl;
    build_rootfs(t_ / "match", "1.50.0");
    build_rootfs(t_ / "mismatch", "1.47.0");
    oci_layout(t_ / "match", t_ / "match.oci");
    oci_layout(t_ / "mismatch", t_ / "mismatch.oci");
    std::string cap = std::string(TRAINIMG_BIN) + " host capture --from " + TRAINIMG_SOURCE_DIR +
                      "/tests/fixtures/host/p6-b200 -o " + (t_ / "host.json").string() + " 2>/dev/null";
    ASSERT_EQ(std::system(cap.c_str()), 0);
  }
  void TearDown() override { fs::remove_all(t_); }

  void cc(const fs::path& out, const std::string& source, const std::string& flags) {
    fs::create_directories(out.parent_path());
    put(t_ / "src.c", source);
    std::string cmd =
        "gcc -shared -fPIC -o '" + out.string() + "' '" + (t_ / "src.c").string() + "' " + flags;
    ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  }
  // An NGC-like image with the seed 002 EFA stack (as tests/inspect_cli_test.cc
  // builds it): installer manifest, libfabric, the aws-ofi-nccl plugin, NCCL,
  // the environment enroot writes. Only the installer version varies.
  void build_rootfs(const fs::path& root, const std::string& installer) {
    put(root / "opt/amazon/efa_installed_packages",
        "# EFA installer version: " + installer +
            "\n# Debug packages installed: no\n"
            "libfabric1-aws_2.6.0amzn1.0_amd64 libnccl-ofi-ngc-v3_1.21.1-1_amd64\n");
    cc(root / "opt/amazon/efa/lib/libfabric.so.1", "int fi_getinfo = 1;\n", "-Wl,-soname,libfabric.so.1");
    put(root / "opt/amazon/efa/lib/pkgconfig/libfabric.pc", "Name: libfabric\nVersion: 2.6.0amzn1.0\n");
    cc(root / "opt/amazon/ofi-nccl/lib/libnccl-net-ofi.so",
       "int ncclNetPlugin_v8 = 1; int ncclNetPlugin_v9 = 1;\n"
       "__attribute__((used)) static const char s[] = \"NET/OFI Initializing aws-ofi-nccl 1.21.1\";\n",
       "-Wl,-soname,libnccl-net-ofi.so '-Wl,-rpath,/opt/amazon/efa/lib' -Wl,--enable-new-dtags");
    cc(root / "usr/lib/x86_64-linux-gnu/libnccl.so.2.30.7", "int ncclGetVersion = 1;\n",
       "-Wl,-soname,libnccl.so.2");
    fs::create_symlink("libnccl.so.2.30.7", root / "usr/lib/x86_64-linux-gnu/libnccl.so.2");
    put(root / "etc/ld.so.conf", "include /etc/ld.so.conf.d/*.conf\n");
    put(root / "etc/ld.so.conf.d/efa.conf", "/opt/amazon/efa/lib\n");
  }
  // An OCI image layout of `root` (one layer) whose config Env is what the
  // seed 002 Dockerfile sets: what enroot turns into /etc/environment.
  void oci_layout(const fs::path& root, const fs::path& out) {
    std::string script = R"SH(set -e
r="$1"; o="$2"; mkdir -p "$o/blobs/sha256"
tar -C "$r" --owner=0 --group=0 --numeric-owner -cf "$o/layer.tar" .
blob() { d=$(sha256sum "$1" | cut -d' ' -f1); mv "$1" "$o/blobs/sha256/$d"; echo "$d $(stat -c %s "$o/blobs/sha256/$d")"; }
set -- $(blob "$o/layer.tar"); L=$1; LS=$2
printf '{"architecture":"amd64","os":"linux","config":{"Env":["PATH=/usr/bin:/bin","LD_LIBRARY_PATH=/opt/amazon/ofi-nccl/lib:/opt/amazon/efa/lib:/usr/local/cuda/compat/lib","NCCL_NET_PLUGIN=ofi"]},"rootfs":{"type":"layers","diff_ids":["sha256:%s"]}}' $L >"$o/c.json"
set -- $(blob "$o/c.json"); C=$1; CS=$2
printf '{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json","config":{"mediaType":"application/vnd.oci.image.config.v1+json","digest":"sha256:%s","size":%s},"layers":[{"mediaType":"application/vnd.oci.image.layer.v1.tar","digest":"sha256:%s","size":%s}]}' $C $CS $L $LS >"$o/m.json"
set -- $(blob "$o/m.json"); M=$1; MS=$2
printf '{"schemaVersion":2,"manifests":[{"mediaType":"application/vnd.oci.image.manifest.v1+json","digest":"sha256:%s","size":%s}]}' $M $MS >"$o/index.json"
printf '{"imageLayoutVersion":"1.0.0"}' >"$o/oci-layout"
)SH";
    put(t_ / "oci.sh", script);
    std::string cmd = "sh '" + (t_ / "oci.sh").string() + "' '" + root.string() + "' '" + out.string() + "'";
    ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  }

  // Pyxis's environment for job 7 step 0 of uid 1000.
  std::string env(const std::string& extra = "") const {
    return "env -i PATH=/usr/bin:/bin PYXIS_RUNTIME_PATH=" + (t_ / "rt").string() +
           " PYXIS_VERSION=0.24.0 SLURM_JOB_UID=1000 SLURM_JOB_ID=7 SLURM_STEP_ID=0 TRAINIMG_HOST_PROFILE=" +
           (t_ / "host.json").string() + " " + extra + " ";
  }
  CmdRun importer(const std::string& env_s, const std::string& args) const {
    return trainimg::testing::sh_split(env_s + TRAINIMG_BIN + " pyxis-importer " + args, t_);
  }
  std::string sqsh() const { return (t_ / "rt/1000/7.0.sqsh").string(); }
  // The gate's cached verdicts (job user 1000's directory).
  std::vector<fs::path> verdict_files() const {
    std::vector<fs::path> out;
    for (const auto& e : fs::directory_iterator(t_ / "rt/1000/trainimg-preflight")) out.push_back(e.path());
    return out;
  }

  fs::path t_;
};

TEST_F(PyxisGate, AMatchingImageRunsAndReleaseTwiceIsFine) {
  CmdRun r = importer(env(), "get oci:" + (t_ / "match.oci").string());
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out.substr(0, r.out.find('\n')), sqsh());
  EXPECT_EQ(r.err.find("efa-host-mismatch"), std::string::npos) << r.err;
  EXPECT_TRUE(fs::exists(sqsh()));
  EXPECT_EQ(importer(env(), "release").rc, 0);
  EXPECT_EQ(importer(env(), "release").rc, 0);
  EXPECT_FALSE(fs::exists(sqsh()));
  // The verdict is cached by image digest and host stack: one entry, reused.
  int entries = 0;
  for (const auto& p : verdict_files()) entries += p.extension() == ".json";
  EXPECT_EQ(entries, 1);
  EXPECT_EQ(importer(env(), "get oci:" + (t_ / "match.oci").string()).rc, 0);
}

// The verdict cache is a plain directory: an entry that is not what the
// gate writes (findings that are not objects, a deep nest) is made again.
TEST_F(PyxisGate, ADamagedVerdictIsMadeAgain) {
  ASSERT_EQ(importer(env(), "get oci:" + (t_ / "mismatch.oci").string()).rc, 1);
  std::vector<fs::path> verdicts = verdict_files();
  ASSERT_EQ(verdicts.size(), 1u);
  auto good = nlohmann::ordered_json::parse(slurp(verdicts[0]));
  for (const std::string& findings : {std::string("[1]"), std::string("[{\"rule\": 1}]"),
                                      std::string(1000000, '[') + std::string(1000000, ']')}) {
    put(verdicts[0],
        "{\"image_digest\": " + good["image_digest"].dump() + ", \"findings\": " + findings + "}");
    CmdRun r = importer(env(), "get oci:" + (t_ / "mismatch.oci").string());
    EXPECT_EQ(r.rc, 1) << findings.substr(0, 20) << ": " << r.err;
    EXPECT_NE(r.err.find("trainimg: efa-host-mismatch:"), std::string::npos) << r.err;
    EXPECT_EQ(nlohmann::ordered_json::parse(slurp(verdicts[0])), good);
  }
}

// A verdict is trusted only from a file the step's user owns: one planted by
// another user (a "clean" verdict for an image that does not match) is
// judged again, not believed.
TEST_F(PyxisGate, AVerdictAnotherUserWroteIsNotTrusted) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to give a file to another user";
  ASSERT_EQ(importer(env(), "get oci:" + (t_ / "mismatch.oci").string()).rc, 1);
  std::vector<fs::path> verdicts = verdict_files();
  ASSERT_EQ(verdicts.size(), 1u);
  auto good = nlohmann::ordered_json::parse(slurp(verdicts[0]));
  put(verdicts[0], "{\"image_digest\": " + good["image_digest"].dump() + ", \"findings\": []}");
  ASSERT_EQ(::chown(verdicts[0].c_str(), 12345, 12345), 0);
  CmdRun r = importer(env(), "get oci:" + (t_ / "mismatch.oci").string());
  EXPECT_EQ(r.rc, 1) << r.err;
  EXPECT_NE(r.err.find("trainimg: efa-host-mismatch:"), std::string::npos) << r.err;
  // The same planted verdict, owned by the step's user, is believed: the
  // owner is what made the difference.
  put(verdicts[0], "{\"image_digest\": " + good["image_digest"].dump() + ", \"findings\": []}");
  ASSERT_EQ(::chown(verdicts[0].c_str(), ::geteuid(), ::getegid()), 0);
  EXPECT_EQ(importer(env(), "get oci:" + (t_ / "mismatch.oci").string()).rc, 0);
}

TEST_F(PyxisGate, AMismatchingImageRefusesTheStepWithTheReportOnStderr) {
  CmdRun r = importer(env(), "get oci:" + (t_ / "mismatch.oci").string());
  EXPECT_EQ(r.rc, 1) << r.err;
  EXPECT_EQ(r.out, "");  // Pyxis reads no path
  EXPECT_NE(
      r.err.find("trainimg: efa-host-mismatch: image EFA installer 1.47.0 differs from the host's 1.50.0"),
      std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("job step refused (TRAINIMG_PREFLIGHT=error)"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(sqsh()));  // nothing left behind
  EXPECT_EQ(importer(env(), "release").rc, 0);
  EXPECT_EQ(importer(env(), "release").rc, 0);
}

TEST_F(PyxisGate, PolicyWarnAndOffLetTheJobRun) {
  CmdRun warn = importer(env("TRAINIMG_PREFLIGHT=warn"), "get oci:" + (t_ / "mismatch.oci").string());
  EXPECT_EQ(warn.rc, 0) << warn.err;
  EXPECT_EQ(warn.out, sqsh() + "\n");
  EXPECT_NE(warn.err.find("trainimg: efa-host-mismatch:"), std::string::npos) << warn.err;
  CmdRun off = importer(env("TRAINIMG_PREFLIGHT=off"), "get oci:" + (t_ / "mismatch.oci").string());
  EXPECT_EQ(off.rc, 0);
  EXPECT_EQ(off.err.find("efa-host-mismatch"), std::string::npos) << off.err;
  CmdRun bad = importer(env("TRAINIMG_PREFLIGHT=maybe"), "get oci:" + (t_ / "mismatch.oci").string());
  EXPECT_EQ(bad.rc, 2);
  EXPECT_NE(bad.err.find("TRAINIMG_PREFLIGHT"), std::string::npos) << bad.err;
}

TEST_F(PyxisGate, NoHostProfileIsCannotTellAndTheJobRuns) {
  CmdRun r = importer(env("TRAINIMG_HOST_PROFILE=" + (t_ / "none.json").string()),
                      "get oci:" + (t_ / "mismatch.oci").string());
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out, sqsh() + "\n");
  EXPECT_NE(r.err.find("trainimg: preflight: cannot tell: no host profile at " + (t_ / "none.json").string()),
            std::string::npos)
      << r.err;
}

// With the shared cache (TRAINIMG_PYXIS_CACHE), the gate judges the entry by
// the facts its sidecar keeps and never reads the .sqsh: an entry whose
// bytes are zeroed (same size, so the cache still trusts it) gets the same
// verdicts with an empty verdict cache. Facts that are not usable (edited)
// are reported and the image is read instead; both broken: exit 2.
TEST_F(PyxisGate, TheSharedEntryIsJudgedByItsSidecarsFactsWithoutReadingTheImage) {
  fs::create_directories(t_ / "shared");
  fs::permissions(t_ / "shared", fs::perms::all | fs::perms::sticky_bit);
  int runs = 0;
  // A fresh verdict cache for each call: the facts (or the image) are judged.
  auto get = [&](const std::string& image) {
    std::string e = env("TRAINIMG_PYXIS_CACHE=" + (t_ / "shared").string() +
                        " TRAINIMG_PREFLIGHT_CACHE=" + (t_ / ("verdicts" + std::to_string(++runs))).string());
    CmdRun r = importer(e, "get oci:" + (t_ / image).string());
    EXPECT_EQ(importer(e, "release").rc, 0);
    return r;
  };
  const std::string refused =
      "trainimg: efa-host-mismatch: image EFA installer 1.47.0 differs from the host's 1.50.0";
  CmdRun m = get("mismatch.oci");
  ASSERT_EQ(m.rc, 1) << m.err;
  EXPECT_NE(m.err.find(refused), std::string::npos) << m.err;
  ASSERT_EQ(get("match.oci").rc, 0);
  std::vector<fs::path> entries;
  for (const auto& e : fs::directory_iterator(t_ / "shared"))
    if (e.path().extension() == ".sqsh") entries.push_back(e.path());
  ASSERT_EQ(entries.size(), 2u);
  for (const auto& p : entries) {
    auto j = nlohmann::ordered_json::parse(slurp(p.string() + ".json"));
    EXPECT_EQ(j["inspect"]["facts"]["image"]["digest"], j["image_digest"]) << p;
    EXPECT_EQ(j["inspect"]["facts"]["facts_version"], 1) << p;
  }
  auto rewrite = [](const fs::path& p, const std::string& text) {
    fs::permissions(p, fs::perms::owner_write, fs::perm_options::add);
    std::ofstream(p, std::ios::binary | std::ios::trunc) << text;
  };
  // Facts that are not usable: reported, and the image is read instead.
  std::map<fs::path, std::string> sidecars;
  for (const auto& p : entries) {
    sidecars[p] = slurp(p.string() + ".json");
    auto j = nlohmann::ordered_json::parse(sidecars[p]);
    j["inspect"]["facts"]["loader_order"] = "edited";
    rewrite(p.string() + ".json", j.dump(2));
  }
  CmdRun edited_mismatch = get("mismatch.oci");
  EXPECT_EQ(edited_mismatch.rc, 1) << edited_mismatch.err;
  EXPECT_NE(edited_mismatch.err.find(refused), std::string::npos) << edited_mismatch.err;
  CmdRun edited = get("match.oci");  // the job runs: stderr has the note
  EXPECT_EQ(edited.rc, 0) << edited.err;
  EXPECT_NE(edited.err.find("trainimg: preflight: the sidecar's facts are not used ("), std::string::npos)
      << edited.err;
  EXPECT_NE(edited.err.find("facts/loader_order: expected an array, not string); reading the image"),
            std::string::npos)
      << edited.err;
  // The images zeroed, the sidecars as the import wrote them.
  for (const auto& p : entries) {
    rewrite(p, std::string(fs::file_size(p), '\0'));
    rewrite(p.string() + ".json", sidecars[p]);
    std::string inspect = std::string(TRAINIMG_BIN) + " inspect sqsh:" + p.string() + " >/dev/null 2>&1";
    int st = std::system(inspect.c_str());  // the image cannot be read
    EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 2) << inspect;
  }
  CmdRun mismatch = get("mismatch.oci");
  EXPECT_EQ(mismatch.rc, 1) << mismatch.err;
  EXPECT_NE(mismatch.err.find(refused), std::string::npos) << mismatch.err;
  EXPECT_EQ(mismatch.err.find("preflight: the sidecar's facts are not used"), std::string::npos)
      << mismatch.err;
  CmdRun match = get("match.oci");
  EXPECT_EQ(match.rc, 0) << match.err;
  EXPECT_EQ(match.out.substr(0, match.out.find('\n')).substr(0, (t_ / "shared").string().size()),
            (t_ / "shared").string());
  // Both broken: the gate does not trust the facts and cannot read the image.
  for (const auto& p : entries) {
    auto j = nlohmann::ordered_json::parse(sidecars[p]);
    j["inspect"]["facts"].erase("facts_version");
    rewrite(p.string() + ".json", j.dump(2));
  }
  CmdRun broken = get("match.oci");
  EXPECT_EQ(broken.rc, 2) << broken.err;
  EXPECT_EQ(broken.out, "");
  // A sidecar nested 1,000,000 deep (4 MB, under the 16 MiB read) is not
  // trusted, and nothing recurses through it: the entry is imported again.
  for (const auto& p : entries) {
    std::string text = sidecars[p];
    text.erase(text.rfind('}'));
    rewrite(p.string() + ".json",
            text + ", \"x\": " + std::string(1000000, '[') + std::string(1000000, ']') + "}");
  }
  CmdRun deep = get("match.oci");
  EXPECT_EQ(deep.rc, 0) << deep.err;
  EXPECT_NE(deep.err.find("trainimg: pyxis cache: importing"), std::string::npos) << deep.err;
}

}  // namespace
