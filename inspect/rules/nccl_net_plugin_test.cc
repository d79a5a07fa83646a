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

// aws-samples/awsome-distributed-training nccl-tests.Dockerfile and
// 0.nvcr-pytorch-aws.dockerfile: aws-ofi-nccl built from source installs
// libnccl-net.so (into /opt/aws-ofi-nccl/install/lib or /opt/amazon/efa/lib),
// NCCL_NET_PLUGIN stays unset and NCCL opens that file: the EFA path.
TEST(NcclNetPlugin, QuietWhenUnsetAndLibncclNetSoIsAwsOfiNccl) {
  auto img = testing::ngc_image();
  testing::set_env(img, "NCCL_NET_PLUGIN", std::nullopt);
  img.layer().file("/opt/aws-ofi-nccl/install/lib/libnccl-net.so",
                   testing::elf_bytes(testing::ElfSpec()
                                          .so("libnccl-net.so")
                                          .exports({"ncclNetPlugin_v8", "ncclNetPlugin_v9"})
                                          .strings({"NET/OFI Initializing aws-ofi-nccl 1.16.3"})),
                   0755);
  testing::set_env(img, "LD_LIBRARY_PATH",
                   "/opt/amazon/ofi-nccl/lib:/opt/amazon/efa/lib:/opt/aws-ofi-nccl/install/lib");
  EXPECT_TRUE(run_rule(kNcclNetPlugin, img).empty());
  // The same name taken by another plugin (NGC's InfiniBand one) still fires.
  img.layer().file("/opt/aws-ofi-nccl/install/lib/libnccl-net.so",
                   testing::elf_bytes(testing::ElfSpec().so("libnccl-net.so").exports({"ncclNetPlugin_v8"})),
                   0755);
  EXPECT_EQ(run_rule(kNcclNetPlugin, img).size(), 1u);
}

TEST(NcclNetPlugin, QuietWhenSetToAPathOfAwsOfiNccl) {
  auto img = testing::ngc_image();
  testing::set_env(img, "NCCL_NET_PLUGIN", "/opt/amazon/ofi-nccl/lib/libnccl-net-ofi.so");
  EXPECT_TRUE(run_rule(kNcclNetPlugin, img).empty());
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
