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

TEST(EfaDriverOnSeedFixture, QuietAtTheMinimum) {
  EXPECT_THAT(messages(check_variant(""), "efa-driver"), IsEmpty());
}
TEST(EfaDriverOnSeedFixture, FiresBelowTheMinimum) {
  EXPECT_THAT(messages(check_variant("efa-old"), "efa-driver"),
              ElementsAre("EFA driver 3.2.1 is below the minimum 3.3.0"));
}
TEST(EfaDriverOnSeedFixture, NearMissAVendorSuffixIsNotBelow) {
  HostProfile p = seed_profile();
  p.efa_driver_version = "3.3.0g";
  auto e = parse_expectations("efa-driver>=3.3.0");
  EXPECT_THAT(messages(check_host(p, e, nullptr, "h"), "efa-driver"), IsEmpty());
}
TEST(EfaDriverOnSeedFixture, FiresWhenModinfoFindsNoModule) {
  EXPECT_THAT(messages(check_variant("efa-missing"), "efa-driver"),
              ElementsAre("modinfo efa shows no version (failed: modinfo: ERROR: Module efa not found.)"));
}
TEST(EfaDriverOnSeedFixture, BaselineInstallerDrift) {
  HostProfile base = seed_profile();
  base.hostname = "ref";
  base.efa_installer_version = "1.47.0";
  base.libfabric_version = "2.4.0";
  EXPECT_THAT(messages(check_variant("", testing::kP6, &base), "efa-driver"),
              ElementsAre("EFA installer 1.50.0 differs from the baseline node ref (1.47.0): every node must share one environment",
                          "libfabric 2.6.0 differs from the baseline node ref (2.4.0): every node must share one environment"));
}

}  // namespace
}  // namespace trainimg::host
