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

namespace {

std::string run(const std::string& cmd) {
  std::array<char, 4096> buf;
  std::string out;
  std::unique_ptr<FILE, int (*)(FILE*)> p(::popen(cmd.c_str(), "r"), ::pclose);
  if (!p) return out;
  while (size_t n = std::fread(buf.data(), 1, buf.size(), p.get())) out.append(buf.data(), n);
  return out;
}

std::string readme() {
  std::ifstream in(std::string(TRAINIMG_SOURCE_DIR) + "/README.md");
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST(Readme, EveryRuleHasATableRow) {
  auto rules = nlohmann::json::parse(run(std::string(TRAINIMG_BIN) + " rules --format json"));
  std::string text = readme();
  ASSERT_FALSE(rules["rules"].empty());
  for (const auto& r : rules["rules"]) {
    std::string id = r["id"];
    std::string row = "| `" + id + "` |";
    EXPECT_NE(text.find(row), std::string::npos) << "README.md has no rule-table row for " << id;
  }
}

TEST(Readme, EverySubcommandIsDocumented) {
  std::string help = run(std::string(TRAINIMG_BIN) + " help");
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
