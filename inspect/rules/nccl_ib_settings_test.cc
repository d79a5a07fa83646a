// SPDX-License-Identifier: GPL-3.0-or-later
#include <gtest/gtest.h>

#include "inspect/rules/rule_test_util.h"

namespace trainimg::inspect::rules {
namespace {

TEST(NcclIbSettings, ErrorForNcclNetIbWarningForIbOnlySettings) {
  auto img = testing::ngc_image();
  testing::set_env(img, "NCCL_NET", "IB");
  testing::set_env(img, "NCCL_IB_HCA", "mlx5_0");
  auto d = run_rule(kNcclIbSettings, img);
  ASSERT_EQ(d.size(), 2u);
  EXPECT_EQ(d[0].severity, Severity::Error);
  EXPECT_EQ(d[0].message, "NCCL_NET=IB in the final environment forces NCCL's InfiniBand transport");
  EXPECT_EQ(d[1].severity, Severity::Warning);
  EXPECT_EQ(d[1].message,
            "NCCL_IB_HCA=mlx5_0 is an InfiniBand-only NCCL setting left in the final environment");
}

TEST(NcclIbSettings, QuietForIbDisableAndOtherNcclSettings) {
  auto img = testing::ngc_image();
  testing::set_env(img, "NCCL_IB_DISABLE", "1");
  testing::set_env(img, "NCCL_NET", "AWS Libfabric");
  testing::set_env(img, "NCCL_SOCKET_IFNAME", "^lo,docker");
  EXPECT_TRUE(run_rule(kNcclIbSettings, img).empty());
}

}  // namespace
}  // namespace trainimg::inspect::rules
