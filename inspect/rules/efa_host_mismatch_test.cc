// SPDX-License-Identifier: GPL-3.0-or-later
#include <gtest/gtest.h>

#include "inspect/host.h"
#include "inspect/rules/rule_test_util.h"

namespace trainimg::inspect::rules {
namespace {

TEST(EfaHostMismatch, FiresWhenNgcLikeImageInstallerDiffersFromExpected) {
  auto d = run_rule(kEfaHostMismatch, testing::ngc_image(), parse_expect("efa-installer=1.47.0"));
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].severity, Severity::Error);
  EXPECT_EQ(d[0].message, "image EFA installer 1.50.0 differs from the host's 1.47.0 (--expect)");
  EXPECT_EQ(d[0].path, "/opt/amazon/efa_installed_packages");
  EXPECT_EQ(d[0].layer, "dir");
}

TEST(EfaHostMismatch, QuietWhenSameReleaseOrNothingExpected) {
  auto f = testing::facts_of(testing::ngc_image());
  EXPECT_TRUE(run_rule(kEfaHostMismatch, f, parse_expect("efa-installer=1.50.0")).empty());
  EXPECT_TRUE(run_rule(kEfaHostMismatch, f).empty());
  // Only the libfabric expectation: the installer is not judged.
  EXPECT_TRUE(run_rule(kEfaHostMismatch, f, parse_expect("libfabric=1.0.0")).empty());
}

TEST(EfaHostMismatch, HostProfileSaysWhereTheExpectationCameFrom) {
  host::HostProfile p;
  p.efa_installer_version = "1.49.0";
  auto d = run_rule(kEfaHostMismatch, testing::ngc_image(), expectations_from_host(p, "node1.json"));
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].message, "image EFA installer 1.50.0 differs from the host's 1.49.0 (node1.json)");
}

}  // namespace
}  // namespace trainimg::inspect::rules
