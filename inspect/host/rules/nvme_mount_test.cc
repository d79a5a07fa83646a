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

TEST(NvmeMountOnSeedFixture, QuietWhenMounted) {
  EXPECT_THAT(messages(check_variant(""), "nvme-mount"), IsEmpty());
  EXPECT_THAT(messages(check_variant("df-wrapped"), "nvme-mount"), IsEmpty());
}
TEST(NvmeMountOnSeedFixture, WarnsWhenOnlyTheRootFilesystemShows) {
  auto r = check_variant("nvme-unmounted");
  EXPECT_THAT(messages(r, "nvme-mount"), ElementsAre("/opt/dlami/nvme is not a mount point (df shows it on /)"));
  EXPECT_EQ(r.findings.at(0).severity, Severity::Warning);
}
TEST(NvmeMountOnSeedFixture, WarnsOnATruncatedDf) {
  EXPECT_THAT(messages(check_variant("df-truncated"), "nvme-mount"),
              ElementsAre("cannot tell whether /opt/dlami/nvme is mounted (unreadable output: df-nvme.txt:2:1: `df` row "
                          "has 3 fields, expected 6 (truncated?))"));
}

}  // namespace
}  // namespace trainimg::host
