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

TEST(FabricManagerOnSeedFixture, QuietWhenActive) {
  EXPECT_THAT(messages(check_variant(""), "fabric-manager"), IsEmpty());
  EXPECT_THAT(messages(check_variant("crlf"), "fabric-manager"), IsEmpty());
}
TEST(FabricManagerOnSeedFixture, FiresWhenInactive) {
  EXPECT_THAT(messages(check_variant("fm-inactive"), "fabric-manager"),
              ElementsAre("nvidia-fabricmanager is inactive, expected active"));
}

}  // namespace
}  // namespace trainimg::host
