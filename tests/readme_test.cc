// SPDX-License-Identifier: GPL-3.0-or-later
// The README is the front door: every rule `trainimg rules` lists must have a
// row in its rule table, and every subcommand must be in its reference.
#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "tests/cli_test_util.h"

namespace {

using trainimg::testing::sh;

std::string readme() {
  std::ifstream in(std::string(TRAINIMG_SOURCE_DIR) + "/README.md");
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST(Readme, EveryRuleHasATableRow) {
  auto rules = nlohmann::json::parse(sh(std::string(TRAINIMG_BIN) + " rules --format json").out);
  std::string text = readme();
  ASSERT_FALSE(rules["rules"].empty());
  for (const auto& r : rules["rules"]) {
    std::string id = r["id"];
    std::string row = "| `" + id + "` |";
    EXPECT_NE(text.find(row), std::string::npos) << "README.md has no rule-table row for " << id;
  }
}

TEST(Readme, EverySubcommandIsDocumented) {
  std::string help = sh(std::string(TRAINIMG_BIN) + " help").out;
  std::string text = readme();
  std::istringstream lines(help.substr(help.find("Subcommands:")));
  std::string line;
  std::getline(lines, line);
  int n = 0;
  while (std::getline(lines, line)) {
    std::istringstream w(line);
    std::string name;
    if (!(w >> name)) continue;
    ++n;
    EXPECT_NE(text.find("trainimg " + name), std::string::npos) << "README.md never shows `trainimg " << name << "`";
  }
  EXPECT_GT(n, 3);
}

}  // namespace
