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

TEST(NvidiaFsOnSeedFixture, QuietForTwoThirtyTwo) {
  EXPECT_THAT(messages(check_variant("", "gds=yes"), "nvidia-fs"), IsEmpty());
}
TEST(NvidiaFsOnSeedFixture, FiresBelowTheFsxMinimum) {
  EXPECT_THAT(messages(check_variant("nvidia-fs-old"), "nvidia-fs"),
              ElementsAre("nvidia-fs 2.20.5 is below the minimum 2.24.2"));
}
TEST(NvidiaFsOnSeedFixture, NearMissExplicitLowerMinimum) {
  EXPECT_THAT(messages(check_variant("nvidia-fs-old", "nvidia-fs>=2.20"), "nvidia-fs"), IsEmpty());
}
TEST(NvidiaFsOnSeedFixture, FiresWhenGdsExpectedButModuleMissing) {
  HostProfile p = seed_profile();
  p.nvidia_fs_loaded = false;
  auto e = parse_expectations("gds=yes");
  EXPECT_THAT(messages(check_host(p, e, nullptr, "h"), "nvidia-fs"), ElementsAre("nvidia_fs is not loaded (not in lsmod)"));
}

}  // namespace
}  // namespace trainimg::host
