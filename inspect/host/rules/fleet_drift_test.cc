// SPDX-License-Identifier: GPL-3.0-or-later
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "inspect/host/rules.h"
#include "inspect/host/test_support.h"

namespace trainimg::host {
namespace {
using ::testing::ElementsAre;
using ::testing::IsEmpty;

std::vector<std::string> drift_of(const FleetNode& n) {
  std::vector<std::string> out;
  for (const auto& f : n.findings)
    if (f.rule_id == "fleet-drift") out.push_back(f.message);
  return out;
}

TEST(FleetDriftOnSeedFixture, QuietWhenEveryNodeAgrees) {
  HostProfile p = testing::seed_profile();
  FleetResult r = judge_fleet({fleet_node("n1", p), fleet_node("n2", p)}, parse_expectations(""));
  EXPECT_THAT(drift_of(r.nodes[0]), IsEmpty());
  EXPECT_THAT(drift_of(r.nodes[1]), IsEmpty());
  EXPECT_THAT(r.drift, IsEmpty());
}

TEST(FleetDriftOnSeedFixture, FiresOnTheOutlierOnly) {
  HostProfile p = testing::seed_profile();
  HostProfile q = p;
  q.kernel = "7.0.0-1015-aws";
  FleetResult r =
      judge_fleet({fleet_node("n1", q), fleet_node("n2", p), fleet_node("n3", p)}, parse_expectations(""));
  EXPECT_THAT(drift_of(r.nodes[0]), ElementsAre("n1 runs kernel 7.0.0-1015-aws, 2 nodes run 7.0.0-1014-aws"));
  EXPECT_THAT(drift_of(r.nodes[1]), IsEmpty());
  ASSERT_EQ(r.drift.size(), 1u);
  EXPECT_EQ(r.drift[0].majority, "7.0.0-1014-aws");
  EXPECT_THAT(r.drift[0].outliers, ElementsAre(std::pair<std::string, std::string>("n1", "7.0.0-1015-aws")));
}

TEST(FleetDriftOnSeedFixture, NearMissTheHostnameIsNeverDrift) {
  HostProfile p = testing::seed_profile();
  HostProfile q = p;
  q.hostname = "another-node";
  FleetResult r = judge_fleet({fleet_node("n1", p), fleet_node("n2", q)}, parse_expectations(""));
  EXPECT_THAT(drift_of(r.nodes[1]), IsEmpty());
  EXPECT_THAT(r.drift, IsEmpty());
}

}  // namespace
}  // namespace trainimg::host
