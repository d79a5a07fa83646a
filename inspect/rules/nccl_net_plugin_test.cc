// SPDX-License-Identifier: GPL-3.0-or-later
#include <gtest/gtest.h>

#include "inspect/rules/rule_test_util.h"

namespace trainimg::inspect::rules {
namespace {

TEST(NcclNetPlugin, FiresWhenNgcLikeImageDropsNcclNetPlugin) {
  auto img = testing::ngc_image();
  testing::set_env(img, "NCCL_NET_PLUGIN", std::nullopt);
  auto d = run_rule(kNcclNetPlugin, img);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].message,
            "NCCL_NET_PLUGIN is not set (NCCL opens libnccl-net.so) in the final environment "
            "(/etc/environment) while an EFA stack is present; it must be 'ofi'");
}

TEST(NcclNetPlugin, FiresWhenSetToAnotherPlugin) {
  auto img = testing::ngc_image();
  testing::set_env(img, "NCCL_NET_PLUGIN", "libnccl-net.so");
  auto d = run_rule(kNcclNetPlugin, img);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_NE(d[0].message.find("is 'libnccl-net.so'"), std::string::npos);
}

TEST(NcclNetPlugin, FiresWhenNoPluginIsResolvable) {
  auto img = testing::ngc_image();
  img.layer().whiteout("/opt/amazon/ofi-nccl");
  auto d = run_rule(kNcclNetPlugin, img);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].message,
            "NCCL_NET_PLUGIN=ofi but no libnccl-net-ofi.so is resolvable by the loader: NCCL would "
            "fall back to 'Using network Socket'");
}

TEST(NcclNetPlugin, QuietOnNgcLikeImageWithOfi) {
  EXPECT_TRUE(run_rule(kNcclNetPlugin, testing::ngc_image()).empty());
}

TEST(NcclNetPlugin, QuietWithoutAnyEfaStack) {
  testing::ImageSpec img;
  img.layer().file("/etc/hostname", "");
  img.config.env = {"PATH=/usr/bin"};
  EXPECT_TRUE(run_rule(kNcclNetPlugin, img).empty());
}

}  // namespace
}  // namespace trainimg::inspect::rules
