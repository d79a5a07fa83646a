// SPDX-License-Identifier: GPL-3.0-or-later
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "inspect/rules/rule.h"

namespace trainimg::inspect::rules {
namespace {

// domain.md §6 image table, in its order, with its severities.
TEST(AllImageRules, MatchTheDomainCatalogue) {
  std::vector<std::pair<std::string, Severity>> want = {
      {"efa-installer-missing", Severity::Warning}, {"efa-host-mismatch", Severity::Error},
      {"libfabric-host-mismatch", Severity::Error}, {"ofi-nccl-host-mismatch", Severity::Error},
      {"efa-stack-incomplete", Severity::Error},    {"libfabric-shadowed", Severity::Error},
      {"ofi-nccl-shadowed", Severity::Error},       {"nccl-net-plugin", Severity::Error},
      {"nccl-ib-settings", Severity::Error},        {"ofi-nccl-nccl-compat", Severity::Error},
      {"mpi-multiple-installs", Severity::Warning}, {"mpi-conflict", Severity::Error},
      {"ld-library-path-order", Severity::Error},   {"cuda-forward-compat", Severity::Info},
  };
  auto rules = image_rules();
  ASSERT_EQ(rules.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(rules[i].id, want[i].first);
    EXPECT_EQ(rules[i].severity, want[i].second) << rules[i].id;
    EXPECT_EQ(rules[i].kind, "image");
    EXPECT_FALSE(rules[i].fix.empty());
    EXPECT_TRUE(rules[i].seed.starts_with("seed 002") || rules[i].seed.starts_with("domain.md"))
        << rules[i].id;
  }
}

TEST(AllImageRules, EveryRuleHasADocsRow) {
  std::ifstream in(std::string(TRAINIMG_SOURCE_DIR) + "/docs/inspect.md");
  std::stringstream ss;
  ss << in.rdbuf();
  for (const auto& r : image_rules())
    EXPECT_NE(ss.str().find("| `" + r.id + "` |"), std::string::npos) << r.id;
}

}  // namespace
}  // namespace trainimg::inspect::rules
