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

TEST(LnetEfaOnSeedFixture, QuietForEightUpInterfaces) {
  EXPECT_THAT(messages(check_variant(""), "lnet-efa"), IsEmpty());
}
TEST(LnetEfaOnSeedFixture, FiresForOneInterfaceDown) {
  EXPECT_THAT(messages(check_variant("lnet-one-down"), "lnet-efa"),
              ElementsAre("1 of 8 LNet @efa interfaces are not `status: up`"));
}
TEST(LnetEfaOnSeedFixture, FiresForTcpOnlyAndInactiveService) {
  EXPECT_THAT(messages(check_variant("lnet-tcp-only", "lustre=yes,efas=8"), "lnet-efa"),
              ElementsAre("LNet has no EFA interface (no `nid: …@efa`): FSx traffic goes over TCP",
                          "configure-efa-fsx-lustre-client.service is inactive, expected active"));
}
TEST(LnetEfaOnSeedFixture, FiresForACountBelowExpected) {
  EXPECT_THAT(messages(check_variant("", "lnet-efas=16"), "lnet-efa"),
              ElementsAre("8 LNet @efa interfaces, expected 16"));
}

}  // namespace
}  // namespace trainimg::host
