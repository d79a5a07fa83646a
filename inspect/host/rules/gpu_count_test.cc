// SPDX-License-Identifier: GPL-3.0-or-later
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "inspect/host/test_support.h"

namespace trainimg::host {
namespace {
using ::testing::ElementsAre;
using ::testing::IsEmpty;
using testing::check_variant;
using testing::messages;
using testing::seed_profile;

TEST(GpuCountOnSeedFixture, QuietForEightB200) {
  EXPECT_THAT(messages(check_variant(""), "gpu-count"), IsEmpty());
}
TEST(GpuCountOnSeedFixture, FiresForSevenGpus) {
  EXPECT_THAT(messages(check_variant("seven-gpus"), "gpu-count"), ElementsAre("nvidia-smi lists 7 GPUs, expected 8"));
}
TEST(GpuCountOnSeedFixture, FiresForAnotherModel) {
  EXPECT_THAT(messages(check_variant("h100"), "gpu-count"), ElementsAre("GPU 0 is NVIDIA H100 80GB HBM3, expected B200"));
}
TEST(GpuCountOnSeedFixture, FiresForMixedDrivers) {
  EXPECT_THAT(messages(check_variant("mixed-driver"), "gpu-count"),
              ElementsAre("GPU 7 reports driver 595.58.02, GPU 0 driver 595.91.07"));
}
TEST(GpuCountOnSeedFixture, FiresWhenNvidiaSmiIsAbsent) {
  EXPECT_THAT(messages(check_variant("no-gpu"), "gpu-count"),
              ElementsAre("nvidia-smi did not list the GPUs (absent: not in bundle: nvidia-smi.csv)"));
}
TEST(GpuCountOnSeedFixture, FiresOnUnreadableOutput) {
  EXPECT_THAT(messages(check_variant("csv-truncated"), "gpu-count"),
              ElementsAre("nvidia-smi did not list the GPUs (unreadable output: nvidia-smi.csv:9:1: expected 3 columns "
                          "(index, name, driver_version), found 2)"));
}
TEST(GpuCountOnSeedFixture, WithoutExpectationOnlyNotes) {
  auto r = check_variant("seven-gpus", "");
  EXPECT_THAT(messages(r, "gpu-count"), IsEmpty());
  EXPECT_THAT(r.notes, ::testing::Contains("gpu-count: 7 × NVIDIA B200 seen; pass --expect gpus=N to check the count"));
}
TEST(GpuCountOnSeedFixture, BaselineDriverDrift) {
  HostProfile base = seed_profile();
  base.hostname = "ref";
  base.driver_version = "595.58.02";
  EXPECT_THAT(messages(check_variant("", testing::kP6, &base), "gpu-count"),
              ElementsAre("NVIDIA driver 595.91.07 differs from the baseline node ref (595.58.02): every node must "
                          "share one environment"));
}

}  // namespace
}  // namespace trainimg::host
