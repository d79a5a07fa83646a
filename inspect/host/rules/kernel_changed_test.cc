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

TEST(KernelChangedOnSeedFixture, QuietForTheHeldAmiKernel) {
  EXPECT_THAT(messages(check_variant(""), "kernel-changed"), IsEmpty());
}
TEST(KernelChangedOnSeedFixture, FiresForAnUpgradedUnheldKernel) {
  EXPECT_THAT(messages(check_variant("kernel-upgraded"), "kernel-changed"),
              ElementsAre("running kernel 7.0.0-1020-aws ≠ the AMI kernel 7.0.0-1014-aws",
                          "kernel packages are not held (apt-mark showhold lists no linux-image*/linux-aws*)"));
}
TEST(KernelChangedOnSeedFixture, BaselineComparesTheKernel) {
  HostProfile base = seed_profile();
  base.hostname = "ref";
  EXPECT_THAT(messages(check_variant("kernel-upgraded", "", &base), "kernel-changed"),
              ElementsAre("running kernel 7.0.0-1020-aws differs from the baseline node ref (7.0.0-1014-aws): every node "
                          "must share one environment",
                          "kernel packages are not held (apt-mark showhold lists no linux-image*/linux-aws*)"));
}

}  // namespace
}  // namespace trainimg::host
