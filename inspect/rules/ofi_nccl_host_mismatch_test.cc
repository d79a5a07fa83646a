// SPDX-License-Identifier: GPL-3.0-or-later
#include <gtest/gtest.h>

#include "inspect/rules/rule_test_util.h"

namespace trainimg::inspect::rules {
namespace {

TEST(OfiNcclHostMismatch, FiresWhenNgcLikeBasePluginDiffersFromHost) {
  testing::NgcOptions o;
  o.installer = false;
  auto d = run_rule(kOfiNcclHostMismatch, testing::ngc_image(o), parse_expect("aws-ofi-nccl=1.21.1"));
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].severity, Severity::Error);
  EXPECT_EQ(d[0].message,
            "image aws-ofi-nccl 1.19.0 (from string in .rodata (\"NET/OFI Initializing aws-ofi-nccl …\")) differs "
            "from the host's 1.21.1 (--expect)");
  EXPECT_EQ(d[0].path, "/opt/amazon/ofi-nccl/lib/libnccl-net-ofi.so");
}

TEST(OfiNcclHostMismatch, QuietWhenTheInstallersPluginMatchesTheHostPackageVersion) {
  EXPECT_TRUE(run_rule(kOfiNcclHostMismatch, testing::ngc_image(), parse_expect("aws-ofi-nccl=1.21.1-1")).empty());
}

}  // namespace
}  // namespace trainimg::inspect::rules
