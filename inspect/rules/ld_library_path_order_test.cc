// SPDX-License-Identifier: GPL-3.0-or-later
#include <gtest/gtest.h>

#include "inspect/rules/rule_test_util.h"

namespace trainimg::inspect::rules {
namespace {

TEST(LdLibraryPathOrder, FiresWhenTheInstallersDirsAreNotFirst) {
  auto img = testing::ngc_image();
  testing::set_env(img, "LD_LIBRARY_PATH", "/usr/local/cuda/compat/lib:/opt/amazon/ofi-nccl/lib:/opt/amazon/efa/lib");
  auto d = run_rule(kLdLibraryPathOrder, img);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].message,
            "LD_LIBRARY_PATH is '/usr/local/cuda/compat/lib:/opt/amazon/ofi-nccl/lib:/opt/amazon/efa/lib' in the final "
            "environment (/etc/environment); it must start with /opt/amazon/ofi-nccl/lib:/opt/amazon/efa/lib while the "
            "EFA installer is present");
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
