// SPDX-License-Identifier: GPL-3.0-or-later
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "recipes/recipes.h"

namespace trainimg::recipes {
namespace {
using ::testing::ElementsAre;

TEST(AllRules, IdsAndSeveritiesOfDomainCatalogue) {
  std::vector<std::string> got;
  for (const auto& r : lint_rules()) got.push_back(r.id + " " + std::string(to_string(r.severity)));
  EXPECT_THAT(
      got, ElementsAre("efa-apt-update error", "efa-container-flags error", "efa-disable-ngc warning",
                       "efa-version-pin warning", "efa-ld-library-path error", "nccl-net-plugin error",
                       "nccl-ib-settings error", "mpi-second-install error", "host-library-mount warning"));
}

TEST(AllRules, EveryRuleHasFixSeedDomainAndADocsRow) {
  std::ifstream in(std::string(TRAINIMG_SOURCE_DIR) + "/docs/lint.md");
  std::stringstream ss;
  ss << in.rdbuf();
  std::string docs = ss.str();
  for (const auto& r : lint_rules()) {
    EXPECT_EQ(r.kind, "dockerfile") << r.id;
    EXPECT_FALSE(r.fix.empty()) << r.id;
    EXPECT_EQ(r.seed.rfind("seed 002", 0), 0u) << r.id;
    EXPECT_NE(docs.find("| `" + r.id + "` |"), std::string::npos) << r.id << " has no row in docs/lint.md";
  }
}

}  // namespace
}  // namespace trainimg::recipes
