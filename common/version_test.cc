// SPDX-License-Identifier: GPL-3.0-or-later
#include "common/version.h"

#include <gtest/gtest.h>

namespace trainimg {

TEST(Version, OrdersNumericComponentsNumerically) {
  EXPECT_LT(compare_versions("1.9.0", "1.10.0"), 0);
  EXPECT_GT(compare_versions("595.91.07", "595.9.7"), 0);
  EXPECT_EQ(compare_versions("1.50.0", "1.50.0"), 0);
}

TEST(Version, EpochAndRevisionAndTilde) {
  EXPECT_GT(compare_versions("1:1.0", "2.0"), 0);
  EXPECT_LT(compare_versions("1.21.1-1", "1.21.1-2"), 0);
  EXPECT_LT(compare_versions("2.0~rc1", "2.0"), 0);
}

// Found by fuzz_host (an EFA manifest line): an epoch past `long` threw
// std::out_of_range out of a comparison.
TEST(Version, AnEpochTooLongForALongSortsLastAndDoesNotThrow) {
  EXPECT_GT(compare_versions("77777777777777777777777777777:1.0", "9:1.0"), 0);
  EXPECT_EQ(compare_versions("77777777777777777777777777777:1.0", "88888888888888888888888888:1.0"), 0);
  EXPECT_LT(compare_versions("1:2.0", "77777777777777777777777777777:1.0"), 0);
}

TEST(Version, ReleaseDropsVendorSuffixAndRevision) {
  EXPECT_EQ(release_of("2.6.0amzn1.0"), "2.6.0");
  EXPECT_EQ(release_of("1.21.1-1"), "1.21.1");
  EXPECT_EQ(release_of("1:2.6.0-1.amzn2"), "2.6.0");
  EXPECT_EQ(release_of("13.4.1"), "13.4.1");
  EXPECT_TRUE(same_release("2.6.0amzn1.0", "2.6.0"));
  EXPECT_FALSE(same_release("2.4.0amzn3.0", "2.6.0"));
}

TEST(Version, LooksLikeVersion) {
  EXPECT_TRUE(looks_like_version("1.50.0"));
  EXPECT_FALSE(looks_like_version("latest"));
  EXPECT_FALSE(looks_like_version("${EFA_INSTALLER_VERSION}"));
  EXPECT_FALSE(looks_like_version(""));
}

}  // namespace trainimg
