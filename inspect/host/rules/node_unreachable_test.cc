// SPDX-License-Identifier: GPL-3.0-or-later
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "inspect/host/rules.h"
#include "inspect/host/test_support.h"

namespace trainimg::host {
namespace {
using ::testing::ElementsAre;
using ::testing::IsEmpty;

std::vector<std::string> unreachable_of(const FleetNode& n) {
  std::vector<std::string> out;
  for (const auto& f : n.findings)
    if (f.rule_id == "node-unreachable") out.push_back(f.file + ": " + f.message);
  return out;
}

TEST(NodeUnreachable, QuietForANodeThatGaveAProfile) {
  FleetResult r = judge_fleet({fleet_node("n1", testing::seed_profile())}, parse_expectations(""));
  EXPECT_THAT(unreachable_of(r.nodes[0]), IsEmpty());
  EXPECT_EQ(r.nodes[0].state, "ok");
}

TEST(NodeUnreachable, FiresOnTheNodeWithItsReason) {
  FleetResult r =
      judge_fleet({unreachable_node("n7", "sinfo does not list node n7")}, parse_expectations(""));
  EXPECT_THAT(unreachable_of(r.nodes[0]), ElementsAre("n7: sinfo does not list node n7"));
  EXPECT_EQ(r.nodes[0].state, "node-unreachable");
  EXPECT_TRUE(r.failed());
  EXPECT_THAT(r.drift, IsEmpty());
}

}  // namespace
}  // namespace trainimg::host
