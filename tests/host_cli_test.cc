// SPDX-License-Identifier: GPL-3.0-or-later
// End-to-end tests of `trainimg host|check|gds` on the fixtures written from
// the seeds' examples (tests/fixtures/host/README.md), and one real capture
// of the machine running the tests.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "tests/cli_test_util.h"

namespace {

using trainimg::testing::CliResult;

// Runs the binary in the source tree with stderr folded into stdout.
CliResult run(const std::string& args) {
  return trainimg::testing::trainimg_in(TRAINIMG_SOURCE_DIR, args);
}

std::string tmp(const std::string& name) {
  return ::testing::TempDir() + "/trainimg-hostcli-" + std::to_string(::getpid()) + "-" + name;
}

const char* kP6 = "--expect gpus=8,efas=8,gpu-model=B200,efa-driver'>='3.3.0,kernel=7.0.0-1014-aws";

TEST(HostCliOnSeedFixture, CaptureFromBundleThenCheckIsClean) {
  std::string json = tmp("p6.json");
  CliResult cap = run("host capture --from tests/fixtures/host/p6-b200 -o " + json);
  EXPECT_EQ(cap.rc, 0) << cap.out;
  EXPECT_NE(cap.out.find("captured 19 probes on p6-node-001: 19 ok"), std::string::npos) << cap.out;
  CliResult chk = run("host check " + json + " " + kP6);
  EXPECT_EQ(chk.rc, 0) << chk.out;
  EXPECT_NE(chk.out.find("0 errors, 0 warnings"), std::string::npos) << chk.out;
  std::filesystem::remove(json);
}

TEST(HostCliOnSeedFixture, CheckFlagsAFailureVariantWithExitOne) {
  std::string base = tmp("base.json"), json = tmp("old.json");
  run("host capture --from tests/fixtures/host/p6-b200 -o " + base);
  // A bundle dir assembled from the base plus the efa-old variant.
  std::string dir = tmp("bundle");
  std::filesystem::create_directories(dir);
  for (auto& e :
       std::filesystem::directory_iterator(std::string(TRAINIMG_SOURCE_DIR) + "/tests/fixtures/host/p6-b200"))
    std::filesystem::copy_file(e.path(), dir + "/" + e.path().filename().string());
  std::filesystem::copy_file(
      std::string(TRAINIMG_SOURCE_DIR) + "/tests/fixtures/host/variants/efa-old/modinfo-efa.txt",
      dir + "/modinfo-efa.txt", std::filesystem::copy_options::overwrite_existing);
  run("host capture --from " + dir + " -o " + json);
  CliResult chk = run("host check " + json + " " + kP6 + " --format json");
  EXPECT_EQ(chk.rc, 1) << chk.out;
  EXPECT_NE(chk.out.find("\"message\": \"EFA driver 3.2.1 is below the minimum 3.3.0\""), std::string::npos)
      << chk.out;
  CliResult diff = run("host diff " + base + " " + json);
  EXPECT_EQ(diff.rc, 1) << diff.out;
  EXPECT_NE(diff.out.find("efa_driver_version"), std::string::npos) << diff.out;
  CliResult drift = run("host check " + json + " --baseline " + base);
  EXPECT_EQ(drift.rc, 1) << drift.out;
  EXPECT_NE(drift.out.find("EFA driver 3.2.1 differs from the baseline node p6-node-001 (3.3.0)"),
            std::string::npos)
      << drift.out;
  std::filesystem::remove_all(dir);
  std::filesystem::remove(base);
  std::filesystem::remove(json);
}

TEST(HostCli, UnreadableProfileIsExitTwoWithPosition) {
  std::string bad = tmp("bad.json");
  std::ofstream(bad) << "{\n  \"schema\": \"trainimg.host/v2\"\n}\n";
  CliResult r = run("host check " + bad);
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.out.find(bad + ":2:3: error: unsupported profile schema \"trainimg.host/v2\""),
            std::string::npos)
      << r.out;
  std::filesystem::remove(bad);
}

TEST(HostCliOnSeedFixture, NcclCheckersAcceptTheSeedsOutputAndFlagFailures) {
  EXPECT_EQ(run("check nccl-log tests/fixtures/host/nccl/log-efa-2node.txt --expect-nics 8").rc, 0);
  CliResult sock = run("check nccl-log tests/fixtures/host/nccl/log-socket-fallback.txt --format sarif");
  EXPECT_EQ(sock.rc, 1);
  EXPECT_NE(sock.out.find("\"ruleId\": \"nccl-log\""), std::string::npos) << sock.out;
  EXPECT_EQ(
      run("check nccl-tests tests/fixtures/host/nccl/allreduce-single-node.txt --baseline-busbw 711").rc, 0);
  EXPECT_EQ(run("check nccl-tests tests/fixtures/host/nccl/allreduce-out-of-bounds.txt --format junit").rc,
            1);
  // Below 0.9 × the user's baseline is an error (0.76 × here); a lower
  // --min-ratio passes it; without a baseline busbw is not judged.
  CliResult slow = run("check nccl-tests tests/fixtures/host/nccl/allreduce-slow.txt --baseline-busbw 711");
  EXPECT_EQ(slow.rc, 1) << slow.out;
  EXPECT_NE(slow.out.find("error: busbw 541.18 GB/s at 1 GiB is below 0.90 × baseline 711.00 GB/s"),
            std::string::npos)
      << slow.out;
  EXPECT_EQ(run("check nccl-tests tests/fixtures/host/nccl/allreduce-slow.txt --baseline-busbw 711 "
                "--min-ratio 0.75")
                .rc,
            0);
  EXPECT_EQ(run("check nccl-tests tests/fixtures/host/nccl/allreduce-slow.txt").rc, 0);
  CliResult loc = run("check nccl-tests tests/fixtures/host/nccl/allreduce-localised.txt");
  EXPECT_EQ(loc.rc, 2);
  EXPECT_NE(loc.out.find("allreduce-localised.txt:33:57: error: number \"20,58\" uses ','"),
            std::string::npos)
      << loc.out;
}

TEST(HostCliOnSeedFixture, GdsCheckShowsTheSeedsArithmetic) {
  CliResult r =
      run("gds check --gdscheck tests/fixtures/host/gds/gdscheck-ok.txt --stats-before "
          "tests/fixtures/host/gds/stats-before.txt "
          "--stats-after tests/fixtures/host/gds/stats-after-gds.txt --mode gds-read --lnet-before "
          "tests/fixtures/host/gds/lnet-before.txt --lnet-after tests/fixtures/host/gds/lnet-after.txt "
          "--expect-efas 8");
  EXPECT_EQ(r.rc, 0) << r.out;
  EXPECT_NE(r.out.find("0 → 10240 (+10240 = 10 GiB / 1 MiB)"), std::string::npos) << r.out;
  CliResult compat =
      run("gds check --stats-before tests/fixtures/host/gds/stats-before.txt --stats-after "
          "tests/fixtures/host/gds/stats-after-compat.txt --mode gds-read");
  EXPECT_EQ(compat.rc, 1) << compat.out;
  EXPECT_NE(compat.out.find("[gds-compat-mode]"), std::string::npos) << compat.out;
  EXPECT_EQ(run("gds check").rc, 2);
}

TEST(HostCliOnSeedFixture, CaptureOfABundleWithoutHostnameOrLnetExitsZero) {
  std::string json = tmp("nogds.json");
  std::string dir = tmp("nogds");
  std::filesystem::create_directories(dir);
  for (auto& e :
       std::filesystem::directory_iterator(std::string(TRAINIMG_SOURCE_DIR) + "/tests/fixtures/host/p6-b200"))
    if (e.path().filename() != "hostname.txt" && e.path().filename() != "lnetctl-efa.txt")
      std::filesystem::copy_file(e.path(), dir + "/" + e.path().filename().string());
  CliResult cap = run("host capture --from " + dir + " -o " + json);
  EXPECT_EQ(cap.rc, 0) << cap.out;
  EXPECT_NE(cap.out.find("17 ok, 2 not answered: hostname.txt (absent) lnetctl-efa.txt (absent)"),
            std::string::npos)
      << cap.out;
  CliResult chk = run("host check " + json + " " + kP6);
  EXPECT_EQ(chk.rc, 0) << chk.out;
  EXPECT_NE(chk.out.find("info: cannot tell: absent: not in bundle: lnetctl-efa.txt"), std::string::npos)
      << chk.out;
  EXPECT_EQ(run("host check " + json + " " + kP6 + " --strict").rc, 1);
  std::filesystem::remove_all(dir);
  std::filesystem::remove(json);
}

// A real capture of this machine: no GPU here, so the GPU probes are
// recorded as absent; the profile is written and the capture exits 0.
TEST(HostCliOnThisMachine, CaptureWritesAValidProfileAndSaysWhatIsMissing) {
  std::string json = tmp("live.json");
  CliResult cap = run("host capture -o " + json);
  bool gpu = std::filesystem::exists("/dev/nvidiactl");
  EXPECT_EQ(cap.rc, 0) << cap.out;
  if (!gpu) {
    EXPECT_NE(cap.out.find("nvidia-smi.csv ("), std::string::npos) << cap.out;
  }
  std::ifstream in(json);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("\"schema\": \"trainimg.host/v1\""), std::string::npos);
  CliResult chk = run("host check " + json + " --format json");
  EXPECT_TRUE(chk.rc == 0 || chk.rc == 1) << chk.out;
  EXPECT_NE(chk.out.find("\"rule\": \"gpu-count\""), std::string::npos) << chk.out;
  if (!gpu) {  // nvidia-smi is not installed: "cannot tell", an info finding
    EXPECT_NE(chk.out.find("cannot tell: absent: command not found: nvidia-smi"), std::string::npos)
        << chk.out;
  }
  std::filesystem::remove(json);
}

}  // namespace
