// SPDX-License-Identifier: GPL-3.0-or-later
#include <gtest/gtest.h>

#include "inspect/rules/rule_test_util.h"

namespace trainimg::inspect::rules {
namespace {

testing::ImageSpec image(const std::string& nccl, const std::string& ofi, std::vector<std::string> apis) {
  testing::NgcOptions o;
  o.nccl = nccl;
  o.installer_ofi = ofi;
  o.installer_ofi_apis = std::move(apis);
  return testing::ngc_image(o);
}

TEST(OfiNcclNcclCompat, FiresWhenThePluginOffersOnlyApisNcclDropped) {
  // NCCL 2.26 dropped net plugin v5 (NVIDIA/nccl v2.26.2-1: net_v6..net_v10).
  auto d = run_rule(kOfiNcclNcclCompat, image("2.26.2", "1.9.1", {"ncclNetPlugin_v4", "ncclNetPlugin_v5"}));
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].message, "the plugin exports ncclNetPlugin v4, v5 but NCCL 2.26.2 accepts only v6..v10");
  EXPECT_EQ(d[0].path, "/opt/amazon/ofi-nccl/lib/libnccl-net-ofi.so");
}

TEST(OfiNcclNcclCompat, QuietWhenNcclStillAcceptsV5) {
  // NCCL 2.25 still looked up v5 (v2.25.1-1 src/net.cc: v5..v9).
  EXPECT_TRUE(run_rule(kOfiNcclNcclCompat, image("2.25.1", "1.9.1", {"ncclNetPlugin_v4", "ncclNetPlugin_v5"})).empty());
}

TEST(OfiNcclNcclCompat, FiresWhenThePluginNeedsANewerNccl) {
  auto d = run_rule(kOfiNcclNcclCompat, image("2.16.5", "1.21.1", {"ncclNetPlugin_v6", "ncclNetPlugin_v8"}));
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].message, "aws-ofi-nccl 1.21.1 needs NCCL 2.17.1 or newer, but the image's NCCL is 2.16.5 "
                          "(/usr/lib/x86_64-linux-gnu/libnccl.so.2.16.5)");
}

TEST(OfiNcclNcclCompat, QuietOnNgcLikeImage) { EXPECT_TRUE(run_rule(kOfiNcclNcclCompat, testing::ngc_image()).empty()); }

// The base's apt NCCL is too old for the plugin, but the image preloads a
// newer one (LD_PRELOAD=/opt/nccl/build/lib/libnccl.so, as
// awsome-distributed-training's nccl-tests.Dockerfile does): no finding.
TEST(OfiNcclNcclCompat, JudgesTheLdPreloadedNccl) {
  testing::NgcOptions o;
  o.nccl = "2.15.5";
  auto img = testing::ngc_image(o);
  ASSERT_EQ(run_rule(kOfiNcclNcclCompat, img).size(), 1u);
  img.layer().file("/opt/nccl/build/lib/libnccl.so.2.27.7",
                   testing::elf_bytes(testing::ElfSpec().so("libnccl.so.2")), 0755);
  testing::set_env(img, "LD_PRELOAD", "/opt/nccl/build/lib/libnccl.so.2.27.7");
  EXPECT_TRUE(run_rule(kOfiNcclNcclCompat, img).empty());
}

}  // namespace
}  // namespace trainimg::inspect::rules
