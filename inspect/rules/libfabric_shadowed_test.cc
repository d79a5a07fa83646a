// SPDX-License-Identifier: GPL-3.0-or-later
#include <gtest/gtest.h>

#include "inspect/rules/rule_test_util.h"

namespace trainimg::inspect::rules {
namespace {

TEST(LibfabricShadowed, FiresWhenAnotherLibfabricComesFirstInLdLibraryPath) {
  auto img = testing::ngc_image();
  img.layer().file("/usr/local/lib/libfabric.so.1", testing::libfabric_elf("source build"), 0755);
  testing::set_env(img, "LD_LIBRARY_PATH", "/usr/local/lib:" + *testing::get_env(img, "LD_LIBRARY_PATH"));
  auto d = run_rule(kLibfabricShadowed, img);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].message, "the loader picks /usr/local/lib/libfabric.so.1 (LD_LIBRARY_PATH) before the EFA build "
                          "/opt/amazon/efa/lib/libfabric.so.1 (LD_LIBRARY_PATH)");
  EXPECT_EQ(d[0].path, "/usr/local/lib/libfabric.so.1");
}

// Ubuntu's libfabric1 in the default directory, after the EFA build.
TEST(LibfabricShadowed, QuietWhenTheEfaBuildComesFirst) {
  auto img = testing::ngc_image();
  img.layer()
      .file("/usr/lib/x86_64-linux-gnu/libfabric.so.1.18.2", testing::libfabric_elf("ubuntu"), 0644)
      .symlink("/usr/lib/x86_64-linux-gnu/libfabric.so.1", "libfabric.so.1.18.2");
  auto f = testing::facts_of(img);
  EXPECT_EQ(f.loader_for("libfabric.so.1")->candidates.size(), 2u);
  EXPECT_TRUE(run_rule(kLibfabricShadowed, f).empty());
}

}  // namespace
}  // namespace trainimg::inspect::rules
