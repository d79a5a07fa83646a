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

}  // namespace
}  // namespace trainimg::inspect::rules
