// SPDX-License-Identifier: GPL-3.0-or-later
// judge_fleet on the seed 000 P6-B200 fixture (tests/fixtures/host): drift
// against the majority, outliers named, unreachable nodes, grouping.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "inspect/host/rules.h"
#include "inspect/host/test_support.h"

namespace trainimg::host {
namespace {
using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::vector<std::string> lines_of(const FleetNode& n, Severity s) {
  std::vector<std::string> out;
  for (const auto& f : n.findings)
    if (f.severity == s) out.push_back(f.rule_id + ": " + f.message);
  return out;
}

TEST(FleetOnSeedFixture, TheOutlierIsNamedAgainstTheMajority) {
  HostProfile base = testing::seed_profile();
  HostProfile newer = base;
  newer.kernel = "7.0.0-1015-aws";
  std::vector<FleetNode> nodes = {fleet_node("n1", base), fleet_node("n2", newer), fleet_node("n3", base),
                                  unreachable_node("n4", "node is down*: no task started")};
  FleetResult r = judge_fleet(nodes, parse_expectations(""));
  EXPECT_TRUE(r.failed());
  EXPECT_THAT(lines_of(r.nodes[1], Severity::Error),
              ElementsAre("fleet-drift: n2 runs kernel 7.0.0-1015-aws, 2 nodes run 7.0.0-1014-aws"));
  EXPECT_THAT(lines_of(r.nodes[0], Severity::Error), ElementsAre());
  EXPECT_THAT(lines_of(r.nodes[3], Severity::Error),
              ElementsAre("node-unreachable: node is down*: no task started"));
  ASSERT_EQ(r.drift.size(), 1u);
  EXPECT_EQ(r.drift[0].fact, "kernel");
  EXPECT_EQ(r.drift[0].majority_nodes, 2);
  EXPECT_EQ(r.nodes[0].profile_digest, r.nodes[2].profile_digest);
  EXPECT_NE(r.nodes[0].profile_digest, r.nodes[1].profile_digest);
  EXPECT_EQ(drain_reason(r.nodes[1]),
            "trainimg: fleet-drift: n2 runs kernel 7.0.0-1015-aws, 2 nodes run 7.0.0-1014-aws");
  EXPECT_EQ(drain_reason(r.nodes[0]), "");
  std::string text = render_fleet_text(r);
  EXPECT_THAT(text, HasSubstr("n1, n3  ok "));
  EXPECT_THAT(text, HasSubstr("4 nodes, 2 failing: 2 errors, 0 warnings"));
  EXPECT_THAT(render_fleet_json(r), HasSubstr("\"schema\": \"trainimg.fleet/v1\""));
  EXPECT_THAT(render_fleet_sarif(r), HasSubstr("\"ruleId\": \"fleet-drift\""));
}

TEST(FleetOnSeedFixture, NearMissATieHasNoMajorityAndAnUnknownValueIsNotDrift) {
  HostProfile a = testing::seed_profile();
  HostProfile b = a;
  b.memlock = "64";
  HostProfile c = a;
  c.kernel.reset();  // uname did not answer there: not compared
  FleetResult r = judge_fleet({fleet_node("n1", a), fleet_node("n2", b)}, parse_expectations(""));
  EXPECT_THAT(lines_of(r.nodes[1], Severity::Error),
              ElementsAre("memlock: memlock limit is 64 KiB, expected unlimited",
                          "fleet-drift: n2 runs memlock 64, 1 node runs unlimited (no majority)"));
  r = judge_fleet({fleet_node("n1", a), fleet_node("n3", c)}, parse_expectations(""));
  EXPECT_TRUE(r.drift.empty());
}

}  // namespace
}  // namespace trainimg::host
