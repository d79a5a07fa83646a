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

TEST(GdrcopyOnSeedFixture, QuietWhenLoadedWithDevice) {
  EXPECT_THAT(messages(check_variant(""), "gdrcopy"), IsEmpty());
}
TEST(GdrcopyOnSeedFixture, FiresWhenModuleAndDeviceMissing) {
  EXPECT_THAT(messages(check_variant("no-gdrdrv"), "gdrcopy"),
              ElementsAre("gdrdrv is not loaded (not in lsmod)",
                          "/dev/gdrdrv is missing (failed: ls: cannot access \x27/dev/gdrdrv\x27: No such file or directory)"));
}

}  // namespace
}  // namespace trainimg::host
