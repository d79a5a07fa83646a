// SPDX-License-Identifier: GPL-3.0-or-later
#include <gtest/gtest.h>

#include "inspect/host.h"
#include "inspect/host/test_support.h"

namespace trainimg::host {
namespace {

TEST(FleetDiffOnSeedFixture, ShowsOnlyTheFactsThatDiffer) {
  HostProfile a = testing::seed_profile();
  HostProfile b = testing::seed_profile("kernel-upgraded");
  b.hostname = "p6-node-002";
  HostProfile c = testing::seed_profile("seven-gpus");
  c.hostname = "p6-node-003";
  FleetDiff d = diff_profiles({{"a.json", a}, {"b.json", b}, {"c.json", c}});
  ASSERT_EQ(d.rows.size(), 4u);
  EXPECT_EQ(d.rows[0], (std::pair<std::string, std::vector<std::string>>(
                           "kernel", {"7.0.0-1014-aws", "7.0.0-1020-aws", "7.0.0-1014-aws"})));
  EXPECT_EQ(d.rows[1], (std::pair<std::string, std::vector<std::string>>("gpu_count", {"8", "8", "7"})));
  EXPECT_EQ(d.rows[2].first, "held_packages");
  EXPECT_EQ(d.rows[2].second[1], "-");  // nothing held on the upgraded node
  EXPECT_EQ(d.rows[3], (std::pair<std::string, std::vector<std::string>>("kernel_held", {"true", "false", "true"})));
  std::string table = render_fleet_table(d);
  EXPECT_EQ(table.substr(0, table.find('\n')).substr(0, 26), "fact           p6-node-001");
  EXPECT_NE(table.find("\ngpu_count      8 "), std::string::npos);
}

TEST(FleetDiffOnSeedFixture, IdenticalNodesHaveNoRows) {
  HostProfile a = testing::seed_profile();
  HostProfile b = a;
  b.hostname = "p6-node-002";
  FleetDiff d = diff_profiles({{"a", a}, {"b", b}});
  EXPECT_TRUE(d.rows.empty());
  EXPECT_GT(d.compared, 25);
}

}  // namespace
}  // namespace trainimg::host
