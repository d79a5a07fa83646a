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

TEST(LustreClientOnSeedFixture, QuietWithTheClient) {
  EXPECT_THAT(messages(check_variant(""), "lustre-client"), IsEmpty());
}
TEST(LustreClientOnSeedFixture, WarnsWhenLustreIsLoadedButLfsMissing) {
  auto r = check_variant("no-lfs");
  EXPECT_THAT(messages(r, "lustre-client"),
              ElementsAre("Lustre is in use but `lfs --version` gave no version (absent: not in bundle: lfs-version.txt)"));
}
TEST(LustreClientOnSeedFixture, NearMissNotCheckedWhenLustreIsNotInUse) {
  auto r = check_variant("no-lfs", "lustre=no");
  EXPECT_THAT(messages(r, "lustre-client"), IsEmpty());
}

}  // namespace
}  // namespace trainimg::host
