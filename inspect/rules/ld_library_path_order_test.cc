// SPDX-License-Identifier: GPL-3.0-or-later
#include <gtest/gtest.h>

#include "inspect/rules/rule_test_util.h"

namespace trainimg::inspect::rules {
namespace {

TEST(LdLibraryPathOrder, FiresWhenADirectoryWithAnotherLibfabricComesFirst) {
  auto img = testing::ngc_image();
  img.layer()
      .file("/usr/local/lib/libfabric.so.1.18.1", testing::libfabric_elf("ubuntu"), 0644)
      .symlink("/usr/local/lib/libfabric.so.1", "libfabric.so.1.18.1");
  testing::set_env(img, "LD_LIBRARY_PATH", "/usr/local/lib:/opt/amazon/ofi-nccl/lib:/opt/amazon/efa/lib");
  auto d = run_rule(kLdLibraryPathOrder, img);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].message,
            "LD_LIBRARY_PATH is '/usr/local/lib:/opt/amazon/ofi-nccl/lib:/opt/amazon/efa/lib' in the final "
            "environment (/etc/environment); it must start with /opt/amazon/ofi-nccl/lib:/opt/amazon/efa/lib "
            "while the "
            "EFA installer is present (/usr/local/lib/libfabric.so.1 comes first)");
}

// NGC's InfiniBand plugin is named libnccl-net.so; with NCCL_NET_PLUGIN=ofi
// NCCL never opens it, so its directory ahead mixes nothing up.
TEST(LdLibraryPathOrder, QuietWhenOnlyAPluginNcclDoesNotOpenComesFirst) {
  auto img = testing::ngc_image();
  img.layer().file("/opt/hpcx/nccl_rdma_sharp_plugin/lib/libnccl-net.so",
                   testing::elf_bytes(testing::ElfSpec().so("libnccl-net.so").exports({"ncclNetPlugin_v8"})),
                   0755);
  testing::set_env(img, "LD_LIBRARY_PATH",
                   "/opt/hpcx/nccl_rdma_sharp_plugin/lib:/opt/amazon/ofi-nccl/lib:/opt/amazon/efa/lib");
  EXPECT_TRUE(run_rule(kLdLibraryPathOrder, img).empty());
  // Unset, NCCL opens exactly that file: then it is a mix-up.
  testing::set_env(img, "NCCL_NET_PLUGIN", std::nullopt);
  auto d = run_rule(kLdLibraryPathOrder, img);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_NE(d[0].message.find("(/opt/hpcx/nccl_rdma_sharp_plugin/lib/libnccl-net.so comes first)"),
            std::string::npos);
}

TEST(LdLibraryPathOrder, FiresWhenTheInstallersDirsAreMissing) {
  auto img = testing::ngc_image();
  testing::set_env(img, "LD_LIBRARY_PATH", "/usr/local/cuda/compat/lib:/opt/amazon/efa/lib");
  auto d = run_rule(kLdLibraryPathOrder, img);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(
      d[0].message,
      "LD_LIBRARY_PATH is '/usr/local/cuda/compat/lib:/opt/amazon/efa/lib' in the final environment "
      "(/etc/environment); it must start with /opt/amazon/ofi-nccl/lib:/opt/amazon/efa/lib while the EFA "
      "installer is present");
}

// Directories ahead that hold no other libfabric or net plugin change nothing
// (fails before: the rule wanted the two directories literally first).
TEST(LdLibraryPathOrder, QuietWhenOnlyUnrelatedDirectoriesComeFirst) {
  auto img = testing::ngc_image();
  testing::set_env(img, "LD_LIBRARY_PATH",
                   "/usr/local/cuda/compat/lib:/opt/amazon/ofi-nccl/lib:/opt/amazon/efa/lib");
  EXPECT_TRUE(run_rule(kLdLibraryPathOrder, img).empty());
}

// aws/deep-learning-containers pytorch/training/docker/2.9/py3/cu130/Dockerfile.gpu:
// the installer's libnccl-ofi deb on a CUDA base puts the plugin in
// /opt/amazon/ofi-nccl/lib/x86_64-linux-gnu, and LD_LIBRARY_PATH is
// /usr/local/lib:/opt/amazon/ofi-nccl/lib/x86_64-linux-gnu:/opt/amazon/openmpi/lib:/opt/amazon/efa/lib:...
TEST(LdLibraryPathOrder, QuietForTheDlcLayoutWithTheMultiarchPluginDir) {
  auto img = testing::ngc_image();
  img.layer()
      .whiteout("/opt/amazon/ofi-nccl/lib/libnccl-net-ofi.so")
      .file("/opt/amazon/ofi-nccl/lib/x86_64-linux-gnu/libnccl-net-ofi.so",
            testing::plugin_elf("1.16.3", {"ncclNetPlugin_v8", "ncclNetPlugin_v9"}), 0755)
      .symlink("/opt/amazon/ofi-nccl/lib/x86_64-linux-gnu/libnccl-net.so", "libnccl-net-ofi.so");
  testing::set_env(img, "LD_LIBRARY_PATH",
                   "/usr/local/lib:/opt/amazon/ofi-nccl/lib/x86_64-linux-gnu:/opt/amazon/openmpi/lib:"
                   "/opt/amazon/efa/lib:/usr/local/cuda/lib64");
  EXPECT_TRUE(run_rule(kLdLibraryPathOrder, img).empty());
  // Leaving the plugin's directory out is still a finding.
  testing::set_env(img, "LD_LIBRARY_PATH", "/usr/local/lib:/opt/amazon/openmpi/lib:/opt/amazon/efa/lib");
  auto d = run_rule(kLdLibraryPathOrder, img);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_NE(
      d[0].message.find("it must start with /opt/amazon/ofi-nccl/lib/x86_64-linux-gnu:/opt/amazon/efa/lib"),
      std::string::npos);
}

TEST(LdLibraryPathOrder, FiresWhenUnset) {
  auto img = testing::ngc_image();
  testing::set_env(img, "LD_LIBRARY_PATH", std::nullopt);
  auto d = run_rule(kLdLibraryPathOrder, img);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_NE(d[0].message.find("LD_LIBRARY_PATH is not set"), std::string::npos);
}

TEST(LdLibraryPathOrder, QuietForSeed002sEnvAndWithoutInstaller) {
  EXPECT_TRUE(run_rule(kLdLibraryPathOrder, testing::ngc_image()).empty());
  testing::NgcOptions o;
  o.installer = false;
  EXPECT_TRUE(run_rule(kLdLibraryPathOrder, testing::ngc_image(o)).empty());
}

}  // namespace
}  // namespace trainimg::inspect::rules
