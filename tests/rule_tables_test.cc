// SPDX-License-Identifier: GPL-3.0-or-later
// The rule tables of README.md and docs/*.md are generated: between
// `<!-- rules:KIND begin -->` and `<!-- rules:KIND end -->` each holds exactly
// what `trainimg rules --format markdown --kind KIND` prints. A table edited
// by hand, or a rule whose wording changed in the code only, fails here.
// TRAINIMG_UPDATE_GOLDEN=1 rewrites the tables (review the diff).
#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>

#include "tests/cli_test_util.h"

namespace {

using trainimg::testing::sh;
using trainimg::testing::slurp;

namespace fs = std::filesystem;

const char* kRegenerate =
    "regenerate them with: TRAINIMG_UPDATE_GOLDEN=1 ctest --test-dir build -R RuleTables (then review git "
    "diff)";

std::string generated(const std::string& kind) {
  return sh(std::string(TRAINIMG_BIN) + " rules --format markdown --kind " + kind).out;
}

std::vector<fs::path> documents() {
  fs::path root(TRAINIMG_SOURCE_DIR);
  std::vector<fs::path> out{root / "README.md"};
  for (const auto& e : fs::directory_iterator(root / "docs"))
    if (e.path().extension() == ".md") out.push_back(e.path());
  std::sort(out.begin() + 1, out.end());
  return out;
}

struct Block {
  std::string kind;
  size_t from = 0, to = 0;  ///< the text between the two marker lines
  int line = 0;             ///< of the begin marker
};

// Every `<!-- rules:KIND begin -->` line and its end marker. An unmatched
// marker is reported by the caller (to == 0).
std::vector<Block> blocks(const std::string& text) {
  std::vector<Block> out;
  const std::string open = "<!-- rules:", begin = " begin -->\n";
  for (size_t at = text.find(open); at != std::string::npos; at = text.find(open, at + 1)) {
    size_t name_end = text.find(' ', at + open.size());
    if (name_end == std::string::npos || text.compare(name_end, begin.size(), begin) != 0) continue;
    Block b;
    b.kind = text.substr(at + open.size(), name_end - at - open.size());
    b.line = 1 + static_cast<int>(std::count(text.begin(), text.begin() + static_cast<long>(at), '\n'));
    b.from = name_end + begin.size();
    size_t end = text.find("<!-- rules:" + b.kind + " end -->", b.from);
    if (end != std::string::npos) b.to = end;
    out.push_back(b);
  }
  return out;
}

TEST(RuleTables, EveryCommittedTableIsTheGeneratedOne) {
  bool update = std::getenv("TRAINIMG_UPDATE_GOLDEN") != nullptr;
  std::map<std::string, std::string> want;
  int tables = 0;
  for (const fs::path& doc : documents()) {
    std::string text = slurp(doc), rewritten = text;
    auto bs = blocks(text);
    // Back to front, so that earlier offsets stay valid while rewriting.
    for (auto it = bs.rbegin(); it != bs.rend(); ++it) {
      const Block& b = *it;
      std::string where = doc.filename().string() + ":" + std::to_string(b.line);
      ASSERT_NE(b.to, 0u) << where << ": <!-- rules:" << b.kind << " begin --> without its end marker";
      if (!want.count(b.kind)) want[b.kind] = generated(b.kind);
      ASSERT_FALSE(want[b.kind].empty())
          << where << ": `trainimg rules --kind " << b.kind << "` lists nothing";
      ++tables;
      if (update)
        rewritten.replace(b.from, b.to - b.from, want[b.kind]);
      else
        EXPECT_EQ(text.substr(b.from, b.to - b.from), want[b.kind])
            << where << ": the " << b.kind
            << " rule table differs from `trainimg rules --format markdown --kind " << b.kind << "`; "
            << kRegenerate;
    }
    if (update && rewritten != text) std::ofstream(doc, std::ios::binary) << rewritten;
  }
  EXPECT_GE(tables, 5);
}

TEST(RuleTables, TheReadmeHasATableOfEveryKind) {
  auto rules = nlohmann::json::parse(sh(std::string(TRAINIMG_BIN) + " rules --format json").out);
  std::set<std::string> kinds, in_readme;
  for (const auto& r : rules["rules"]) kinds.insert(r["kind"].get<std::string>());
  for (const auto& b : blocks(slurp(fs::path(TRAINIMG_SOURCE_DIR) / "README.md"))) in_readme.insert(b.kind);
  EXPECT_EQ(in_readme, kinds) << kRegenerate;
  EXPECT_EQ(kinds.size(), 6u);  // dockerfile recipe image host fleet policy
}

TEST(RuleTables, EveryRuleNamesItsDocsAnchor) {
  auto rules = nlohmann::json::parse(sh(std::string(TRAINIMG_BIN) + " rules --format json").out);
  for (const auto& r : rules["rules"]) {
    std::string docs = r["docs"], kind = r["kind"];
    ASSERT_NE(docs.find('#'), std::string::npos) << r["id"];
    std::string page = slurp(fs::path(TRAINIMG_SOURCE_DIR) / docs.substr(0, docs.find('#')));
    // The page holds the rule's table.
    EXPECT_NE(page.find("<!-- rules:" + kind + " begin -->"), std::string::npos)
        << r["id"] << ": " << docs << " has no " << kind << " rule table";
  }
}

}  // namespace
