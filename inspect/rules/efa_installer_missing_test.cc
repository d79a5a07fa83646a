// SPDX-License-Identifier: GPL-3.0-or-later
#include <gtest/gtest.h>

#include "inspect/rules/rule_test_util.h"

namespace trainimg::inspect::rules {
namespace {

TEST(EfaInstallerMissing, FiresOnNgcLikeBaseWithoutInstaller) {
  testing::NgcOptions o;
  o.installer = false;
  auto d = run_rule(kEfaInstallerMissing, testing::ngc_image(o));
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].severity, Severity::Warning);
  EXPECT_EQ(d[0].rule_id, "efa-installer-missing");
  EXPECT_EQ(d[0].message,
            "no EFA installer manifest: the image relies on the base's built-in EFA stack (libfabric 2.4.0 at "
            "/opt/amazon/efa/lib/libfabric.so.1.27.0), whose version may differ from the host's");
  EXPECT_EQ(d[0].path, "/opt/amazon/efa_installed_packages");
}

TEST(EfaInstallerMissing, QuietWhenNgcLikeImageHasTheInstallerManifest) {
  EXPECT_TRUE(run_rule(kEfaInstallerMissing, testing::ngc_image()).empty());
}

}  // namespace
}  // namespace trainimg::inspect::rules
