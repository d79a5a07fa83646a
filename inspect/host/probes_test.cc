// SPDX-License-Identifier: GPL-3.0-or-later
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "inspect/host.h"
#include "inspect/host/test_support.h"

namespace trainimg::host {
namespace {

using ::testing::Contains;
using testing::seed_profile;

TEST(CaptureOnSeedFixture, BuildsTheP6B200Profile) {
  HostProfile p = seed_profile();
  EXPECT_EQ(p.hostname, "p6-node-001");
  EXPECT_EQ(p.source, "bundle:p6-b200");
  EXPECT_EQ(p.gpu_count, 8);
  EXPECT_EQ(p.gpu_model, "NVIDIA B200");
  EXPECT_EQ(p.driver_version, "595.91.07");
  EXPECT_EQ(p.cuda_driver_version, "13.2");
  EXPECT_EQ(p.fabric_manager, "active");
  EXPECT_EQ(p.efa_driver_version, "3.3.0");
  EXPECT_EQ(p.efa_installer_version, "1.50.0");
  EXPECT_EQ(p.libfabric_version, "2.6.0");
  EXPECT_EQ(p.ofi_nccl_version, "1.21.1");
  EXPECT_EQ(p.openmpi4_version, "4.1.7");
  EXPECT_EQ(p.openmpi5_version, "5.0.9");
  EXPECT_EQ(p.pmix_version, "4.2.8");
  EXPECT_EQ(p.efa_device_count, 8);
  EXPECT_EQ(p.fi_info_domain_count, 8);
  EXPECT_EQ(p.gdrdrv_loaded, true);
  EXPECT_EQ(p.dev_gdrdrv, true);
  EXPECT_EQ(p.memlock, "unlimited");
  EXPECT_EQ(p.nvme_mounted, true);
  EXPECT_EQ(p.nvme_size, "28T");
  EXPECT_EQ(p.kernel, "7.0.0-1014-aws");
  EXPECT_EQ(p.kernel_held, true);
  EXPECT_EQ(p.lustre_version, "2.15.6");
  EXPECT_EQ(p.nvidia_fs_loaded, true);
  EXPECT_EQ(p.nvidia_fs_version, "2.30.2");
  EXPECT_EQ(p.lnet_efa_count, 8);
  EXPECT_EQ(p.lnet_efa_up, 8);
  EXPECT_TRUE(unanswered_probes(p).empty());
  EXPECT_EQ(p.probes.at("nvidia-smi.csv").command, "nvidia-smi --query-gpu=index,name,driver_version --format=csv");
  EXPECT_EQ(p.probes.at("nvidia-smi.csv").parsed["gpu_count"], 8);
}

TEST(CaptureOnSeedFixture, CrlfOutputsGiveTheSameFacts) {
  HostProfile p = seed_profile("crlf");
  EXPECT_EQ(p.gpu_count, 8);
  EXPECT_EQ(p.kernel, "7.0.0-1014-aws");
  EXPECT_EQ(p.fabric_manager, "active");
  EXPECT_EQ(p.nvme_mounted, true);
  EXPECT_EQ(p.memlock, "unlimited");
  EXPECT_EQ(p.efa_installer_version, "1.50.0");
  EXPECT_EQ(p.lnet_efa_count, 8);
}

TEST(CaptureOnSeedFixture, MangledOutputIsRecordedNotThrown) {
  HostProfile p = seed_profile("csv-extra-column");
  EXPECT_EQ(p.gpu_count, std::nullopt);
  EXPECT_EQ(p.probes.at("nvidia-smi.csv").parsed["parse_error"],
            "nvidia-smi.csv:1:1: expected 3 columns (index, name, driver_version), found 4");
}

TEST(CaptureOnSeedFixture, AbsentAndFailedProbesAreFacts) {
  HostProfile p = seed_profile("no-gdrdrv");
  EXPECT_EQ(p.dev_gdrdrv, false);  // a failed `ls -l` of a missing node answers the question
  EXPECT_EQ(p.gdrdrv_loaded, false);
  EXPECT_THAT(unanswered_probes(p), Contains("dev-gdrdrv.txt (failed)"));
  HostProfile q = seed_profile("no-gpu");
  EXPECT_EQ(q.gpu_count, std::nullopt);
  EXPECT_EQ(q.probes.at("nvidia-smi.csv").status, ProbeStatus::Absent);
}

TEST(CaptureOnSeedFixture, BundleRoundTripsThroughReplay) {
  HostProfile p = seed_profile("no-gdrdrv");
  std::string dir = ::testing::TempDir() + "/trainimg-bundle-" + std::to_string(::getpid());
  std::filesystem::remove_all(dir);
  write_bundle(p, dir);
  EXPECT_TRUE(std::filesystem::exists(dir + "/dev-gdrdrv.txt.failed"));
  EXPECT_FALSE(std::filesystem::exists(dir + "/dev-gdrdrv.txt"));
  ReplayRunner replay(dir);
  HostProfile q = capture(replay, std::chrono::seconds(1), "bundle");
  auto strip = [](HostProfile h) {
    h.captured_at.clear();
    h.source.clear();
    for (auto& [id, r] : h.probes) r.seconds = 0, r.exit_code = 0;
    return serialize(h);
  };
  EXPECT_EQ(strip(q), strip(p));
  std::filesystem::remove_all(dir);
}

// Real capture on the machine running the tests (CI: no GPU, no EFA). Every
// probe must come back with a status; the GPU probe is recorded as not ok.
TEST(CaptureOnThisMachine, RunsEveryProbeWithoutCrashing) {
  ExecRunner runner;
  HostProfile p = capture(runner, std::chrono::seconds(10), "live");
  EXPECT_EQ(p.probes.size(), probe_specs().size());
  EXPECT_FALSE(p.hostname.empty());
  EXPECT_TRUE(p.kernel.has_value());  // uname exists everywhere
  EXPECT_TRUE(p.memlock.has_value());
  if (!std::filesystem::exists("/dev/nvidiactl")) {
    EXPECT_NE(p.probes.at("nvidia-smi.csv").status, ProbeStatus::Ok);
    EXPECT_EQ(p.gpu_count, std::nullopt);
    EXPECT_FALSE(unanswered_probes(p).empty());
  }
  HostProfile q = parse_profile(serialize(p));
  EXPECT_EQ(q.kernel, p.kernel);
}

}  // namespace
}  // namespace trainimg::host

namespace trainimg::host {
namespace {

// The lead's manual run of `trainimg host capture` on an H200 VM (no EFA, no
// systemd), kept as recorded: the profile must parse and hold the GPU fields.
TEST(RealH200Capture, ParsesWithItsGpuFields) {
  HostProfile p = read_profile(testing::fixture("h200-real/h200.json"));
  EXPECT_EQ(p.gpu_count, 1);
  EXPECT_EQ(p.gpu_model, "NVIDIA H200");
  EXPECT_EQ(p.driver_version, "580.159.04");
  EXPECT_EQ(p.cuda_driver_version, "13.0");
  EXPECT_EQ(p.probes.at("fabricmanager.txt").status, ProbeStatus::Absent);
}

}  // namespace
}  // namespace trainimg::host
