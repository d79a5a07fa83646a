// SPDX-License-Identifier: GPL-3.0-or-later
#include <gtest/gtest.h>

#include "inspect/rules/rule_test_util.h"

namespace trainimg::inspect::rules {
namespace {

TEST(LibfabricHostMismatch, FiresWhenNgcLikeBaseLibfabricDiffersFromHost) {
  testing::NgcOptions o;
  o.installer = false;
  auto d = run_rule(kLibfabricHostMismatch, testing::ngc_image(o), parse_expect("libfabric=2.6.0amzn1.0"));
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].message,
            "image libfabric 2.4.0 (from /opt/amazon/efa/lib/pkgconfig/libfabric.pc) differs from the host's "
            "2.6.0amzn1.0 (--expect)");
  EXPECT_EQ(d[0].path, "/opt/amazon/efa/lib/libfabric.so.1.27.0");
}

// 2.6.0amzn1.0 in the image and "2.6.0" from the host name the same release.
TEST(LibfabricHostMismatch, QuietForTheSameReleaseWithAVendorSuffix) {
  EXPECT_TRUE(run_rule(kLibfabricHostMismatch, testing::ngc_image(), parse_expect("libfabric=2.6.0")).empty());
}

}  // namespace
}  // namespace trainimg::inspect::rules
