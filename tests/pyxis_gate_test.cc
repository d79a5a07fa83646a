// SPDX-License-Identifier: GPL-3.0-or-later
// The image gate at job start: `trainimg pyxis-importer get URI` driven as
// Pyxis 0.24 drives its importer= (environment: PYXIS_RUNTIME_PATH,
// PYXIS_VERSION, SLURM_JOB_UID/ID, SLURM_STEP_ID; first stdout line = the
// .sqsh path; non-zero exit = the step fails with stderr; `release` twice).
// Images: dir: rootfs fixtures written here with the seed 002 EFA installer
// manifest (1.50.0: matches the seed 000 node; 1.47.0: does not). The node
// profile is the P6-B200 seed fixture captured from its bundle.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

namespace {

namespace fs = std::filesystem;

struct CmdRun {
  int rc;
  std::string out, err;
};

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

class PyxisGate : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / "trainimg-pyxis-gate-XXXXXX").string();
    ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
    t_ = tmpl;
    for (auto [name, v] : {std::pair{"match", "1.50.0"}, std::pair{"mismatch", "1.47.0"}}) {
      fs::create_directories(t_ / name / "opt/amazon");
      fs::create_directories(t_ / name / "bin");
      std::ofstream(t_ / name / "opt/amazon/efa_installed_packages")
          << "# EFA installer version: " << v << "\n# Debug packages installed: no\n";
      std::ofstream(t_ / name / "bin/hello") << "#!/bin/sh\necho hello\n";
    }
    std::string cap = std::string(TRAINIMG_BIN) + " host capture --from " + TRAINIMG_SOURCE_DIR +
                      "/tests/fixtures/host/p6-b200 -o " + (t_ / "host.json").string() + " 2>/dev/null";
    ASSERT_EQ(std::system(cap.c_str()), 0);
  }
  void TearDown() override { fs::remove_all(t_); }

  // Pyxis's environment for job 7 step 0 of uid 1000.
  std::string env(const std::string& extra = "") const {
    return "env -i PATH=/usr/bin:/bin PYXIS_RUNTIME_PATH=" + (t_ / "rt").string() +
           " PYXIS_VERSION=0.24.0 SLURM_JOB_UID=1000 SLURM_JOB_ID=7 SLURM_STEP_ID=0 TRAINIMG_HOST_PROFILE=" +
           (t_ / "host.json").string() + " " + extra + " ";
  }
  CmdRun importer(const std::string& env_s, const std::string& args) const {
    std::string cmd = env_s + TRAINIMG_BIN + " pyxis-importer " + args + " >" + (t_ / "out").string() +
                      " 2>" + (t_ / "err").string();
    int st = std::system(cmd.c_str());
    return {WIFEXITED(st) ? WEXITSTATUS(st) : -1, slurp(t_ / "out"), slurp(t_ / "err")};
  }
  std::string sqsh() const { return (t_ / "rt/1000/7.0.sqsh").string(); }

  fs::path t_;
};

TEST_F(PyxisGate, AMatchingImageRunsAndReleaseTwiceIsFine) {
  CmdRun r = importer(env(), "get dir:" + (t_ / "match").string());
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out.substr(0, r.out.find('\n')), sqsh());
  EXPECT_EQ(r.err.find("efa-host-mismatch"), std::string::npos) << r.err;
  EXPECT_TRUE(fs::exists(sqsh()));
  EXPECT_EQ(importer(env(), "release").rc, 0);
  EXPECT_EQ(importer(env(), "release").rc, 0);
  EXPECT_FALSE(fs::exists(sqsh()));
}

TEST_F(PyxisGate, AMismatchingImageRefusesTheStepWithTheReportOnStderr) {
  CmdRun r = importer(env(), "get dir:" + (t_ / "mismatch").string());
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
  CmdRun warn = importer(env("TRAINIMG_PREFLIGHT=warn"), "get dir:" + (t_ / "mismatch").string());
  EXPECT_EQ(warn.rc, 0) << warn.err;
  EXPECT_EQ(warn.out, sqsh() + "\n");
  EXPECT_NE(warn.err.find("trainimg: efa-host-mismatch:"), std::string::npos) << warn.err;
  CmdRun off = importer(env("TRAINIMG_PREFLIGHT=off"), "get dir:" + (t_ / "mismatch").string());
  EXPECT_EQ(off.rc, 0);
  EXPECT_EQ(off.err.find("efa-host-mismatch"), std::string::npos) << off.err;
  CmdRun bad = importer(env("TRAINIMG_PREFLIGHT=maybe"), "get dir:" + (t_ / "mismatch").string());
  EXPECT_EQ(bad.rc, 2);
  EXPECT_NE(bad.err.find("TRAINIMG_PREFLIGHT"), std::string::npos) << bad.err;
}

TEST_F(PyxisGate, NoHostProfileIsCannotTellAndTheJobRuns) {
  CmdRun r = importer(env("TRAINIMG_HOST_PROFILE=" + (t_ / "none.json").string()),
                   "get dir:" + (t_ / "mismatch").string());
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out, sqsh() + "\n");
  EXPECT_NE(r.err.find("trainimg: preflight: cannot tell: no host profile at " + (t_ / "none.json").string()),
            std::string::npos)
      << r.err;
}

}  // namespace
