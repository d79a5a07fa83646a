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

TEST(MemlockOnSeedFixture, QuietWhenUnlimited) {
  EXPECT_THAT(messages(check_variant(""), "memlock"), IsEmpty());
}
TEST(MemlockOnSeedFixture, FiresWhenLimited) {
  EXPECT_THAT(messages(check_variant("memlock-limited"), "memlock"),
              ElementsAre("memlock limit is 8192 KiB, expected unlimited"));
}

}  // namespace
}  // namespace trainimg::host
