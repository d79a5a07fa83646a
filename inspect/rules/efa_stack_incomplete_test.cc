// SPDX-License-Identifier: GPL-3.0-or-later
#include <gtest/gtest.h>

#include "inspect/rules/rule_test_util.h"

namespace trainimg::inspect::rules {
namespace {

TEST(EfaStackIncomplete, FiresWhenALaterLayerDeletesThePlugin) {
  auto img = testing::ngc_image();
  img.layer().whiteout("/opt/amazon/ofi-nccl");
  auto f = testing::facts_of(img, testing::FixtureKind::DockerArchive);
  auto d = run_rule(kEfaStackIncomplete, f);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].message, "the EFA installer manifest is present but the aws-ofi-nccl plugin "
                          "/opt/amazon/ofi-nccl/lib/libnccl-net-ofi.so (layer " + f.layers[1] +
                              ") was deleted by layer " + f.layers[2]);
  EXPECT_EQ(d[0].layer, f.layers[2]);
}

TEST(EfaStackIncomplete, FiresWhenTheManifestCameWithoutLibfabric) {
  testing::ImageSpec img;
  img.layer().file("/opt/amazon/efa_installed_packages",
                   "# EFA installer version: 1.50.0\nlibfabric1-aws_2.6.0amzn1.0_amd64\n");
  auto d = run_rule(kEfaStackIncomplete, img);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].message, "the EFA installer manifest is present but libfabric is missing (expected "
                          "/opt/amazon/efa/lib/libfabric.so.1)");
}

TEST(EfaStackIncomplete, QuietOnTheCompleteNgcLikeImage) {
  EXPECT_TRUE(run_rule(kEfaStackIncomplete, testing::ngc_image()).empty());
}

}  // namespace
}  // namespace trainimg::inspect::rules
