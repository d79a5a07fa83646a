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

TEST(EfaDeviceCountOnSeedFixture, QuietForEightRdmapAndEightDomains) {
  auto r = check_variant("");
  EXPECT_THAT(messages(r, "efa-device-count"), IsEmpty());
}
TEST(EfaDeviceCountOnSeedFixture, ConnectXIsIgnoredAndSaidSo) {
  auto r = check_variant("connectx");
  EXPECT_THAT(messages(r, "efa-device-count"), IsEmpty());
  EXPECT_THAT(r.notes, ::testing::Contains("efa-device-count: ignored ConnectX-7 devices ibp115s0f0, ibp116s0f0, mlx5_0 "
                                           "(link DOWN is normal; NCCL selects EFA: `Using network Libfabric`, `provider is efa`)"));
}
TEST(EfaDeviceCountOnSeedFixture, FiresForSevenEfas) {
  EXPECT_THAT(messages(check_variant("seven-efas"), "efa-device-count"),
              ElementsAre("7 rdmap* devices, expected 8 EFAs"));
}
TEST(EfaDeviceCountOnSeedFixture, FiresWhenLibfabricSeesFewer) {
  EXPECT_THAT(messages(check_variant("fi-info-six"), "efa-device-count"),
              ElementsAre("8 rdmap* devices but 6 fi_info EFA domains: libfabric does not see every device"));
}
TEST(EfaDeviceCountOnSeedFixture, NearMissEfaDirectDomainsCountOnce) {
  EXPECT_THAT(messages(check_variant("fi-info-direct"), "efa-device-count"), IsEmpty());
}

}  // namespace
}  // namespace trainimg::host
