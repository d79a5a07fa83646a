// SPDX-License-Identifier: GPL-3.0-or-later
#include <gtest/gtest.h>

#include "inspect/rules/rule_test_util.h"

namespace trainimg::inspect::rules {
namespace {

// Some NGC releases keep their own plugin under /opt/amazon/aws-ofi-nccl
// (domain.md §2); here it stays first in LD_LIBRARY_PATH after the installer.
testing::ImageSpec with_base_plugin_first(bool base_first) {
  auto img = testing::ngc_image();
  img.layers[0].file("/opt/amazon/aws-ofi-nccl/lib/libnccl-net-ofi.so",
                     testing::plugin_elf("1.19.0", {"ncclNetPlugin_v8", "ncclNetPlugin_v9"}), 0755);
  std::string lld = base_first ? "/opt/amazon/aws-ofi-nccl/lib:/opt/amazon/ofi-nccl/lib:/opt/amazon/efa/lib"
                               : "/opt/amazon/ofi-nccl/lib:/opt/amazon/efa/lib:/opt/amazon/aws-ofi-nccl/lib";
  testing::set_env(img, "LD_LIBRARY_PATH", lld);
  return img;
}

TEST(OfiNcclShadowed, FiresWhenNgcLikeBasePluginIsFirstInThePath) {
  auto d = run_rule(kOfiNcclShadowed, with_base_plugin_first(true));
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].message, "NCCL would load /opt/amazon/aws-ofi-nccl/lib/libnccl-net-ofi.so (aws-ofi-nccl 1.19.0, "
                          "LD_LIBRARY_PATH) instead of the newer 1.21.1 at /opt/amazon/ofi-nccl/lib/libnccl-net-ofi.so");
  EXPECT_EQ(d[0].path, "/opt/amazon/aws-ofi-nccl/lib/libnccl-net-ofi.so");
}

TEST(OfiNcclShadowed, QuietWhenTheInstallersCopyComesFirst) {
  EXPECT_TRUE(run_rule(kOfiNcclShadowed, with_base_plugin_first(false)).empty());
}

// awsome-distributed-training micro-benchmarks/nccl-tests/nccl-tests.Dockerfile:
// after the installer, aws-ofi-nccl is built from source into
// /opt/aws-ofi-nccl/install/lib (libnccl-net.so), which LD_LIBRARY_PATH names
// and NCCL_NET_PLUGIN (unset) opens. Not older than the installer's copy: no
// finding (fails before: "instead of the EFA installer's copy").
TEST(OfiNcclShadowed, QuietForASourceBuildNotOlderThanTheInstallersCopy) {
  auto img = testing::ngc_image();
  img.layer().file("/opt/aws-ofi-nccl/install/lib/libnccl-net.so",
                   testing::plugin_elf("1.21.1", {"ncclNetPlugin_v8", "ncclNetPlugin_v9"}), 0755);
  testing::set_env(img, "NCCL_NET_PLUGIN", std::nullopt);
  testing::set_env(img, "LD_LIBRARY_PATH", "/opt/amazon/efa/lib:/opt/aws-ofi-nccl/install/lib");
  EXPECT_TRUE(run_rule(kOfiNcclShadowed, img).empty());
  // Another copy of the same release spelt as aws-ofi-nccl's v1.x.y-aws tags
  // spell it is no newer (fails before: "instead of the newer 1.21.1-aws").
  auto same = img;
  same.layer().file("/usr/local/aws-ofi-nccl/lib/libnccl-net.so",
                    testing::plugin_elf("1.21.1-aws", {"ncclNetPlugin_v8", "ncclNetPlugin_v9"}), 0755);
  EXPECT_TRUE(run_rule(kOfiNcclShadowed, same).empty());
  // An older source build still loses to the installer's newer copy.
  img.layer().file("/opt/aws-ofi-nccl/install/lib/libnccl-net.so",
                   testing::plugin_elf("1.16.3", {"ncclNetPlugin_v8", "ncclNetPlugin_v9"}), 0755);
  auto d = run_rule(kOfiNcclShadowed, img);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].message,
            "NCCL would load /opt/aws-ofi-nccl/install/lib/libnccl-net.so (aws-ofi-nccl 1.16.3, "
            "LD_LIBRARY_PATH) instead of the newer 1.21.1 at /opt/amazon/ofi-nccl/lib/libnccl-net-ofi.so");
}

TEST(OfiNcclShadowed, FiresForAnUnknownVersionBeforeTheInstallersCopy) {
  auto img = testing::ngc_image();
  img.layer().file(
      "/opt/aws-ofi-nccl/lib/libnccl-net-ofi.so",
      testing::elf_bytes(testing::ElfSpec().so("libnccl-net-ofi.so").exports({"ncclNetPlugin_v8"})), 0755);
  testing::set_env(img, "LD_LIBRARY_PATH",
                   "/opt/aws-ofi-nccl/lib:/opt/amazon/ofi-nccl/lib:/opt/amazon/efa/lib");
  auto d = run_rule(kOfiNcclShadowed, img);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].message,
            "NCCL would load /opt/aws-ofi-nccl/lib/libnccl-net-ofi.so (aws-ofi-nccl of unknown "
            "version, LD_LIBRARY_PATH) instead of the EFA installer's copy at "
            "/opt/amazon/ofi-nccl/lib/libnccl-net-ofi.so");
}

}  // namespace
}  // namespace trainimg::inspect::rules
