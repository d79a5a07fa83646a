// SPDX-License-Identifier: GPL-3.0-or-later
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "common/error.h"
#include "recipes/dockerfile/dockerfile.h"

namespace trainimg::recipes {
namespace {
using ::testing::ElementsAre;

Script split(const std::string& s, const Vars& vars = {}) {
  static SourceFile f("script", "");
  f = SourceFile("script", s);
  MappedText t;
  t.append(s, 0);
  return split_shell(t, vars, f);
}

// "op program arg…" per command, with depth when nested.
std::vector<std::string> show(const Script& sc) {
  std::vector<std::string> out;
  for (const auto& c : sc.commands) {
    std::string line = std::string(to_string(c.op));
    if (c.depth) line += "[" + std::to_string(c.depth) + "]";
    for (const auto& a : c.assignments) line += "{" + a.text + "}";
    for (const auto& w : c.argv) line += (line.empty() ? "" : " ") + w.text;
    out.push_back(line);
  }
  return out;
}

TEST(Shell, OperatorsInOrder) {
  EXPECT_THAT(show(split("a 1 && b || c; d | e & f\ng")),
              ElementsAre("a 1", "&& b", "|| c", "; d", "| e", "& f", "; g"));
}

TEST(Shell, QuotesAndEscapesAreRemovedButKeepOneWord) {
  auto sc = split("echo 'a b' \"c $X d\" e\\ f \"\\$HOME\" '' x\"y\"z", {{"X", "1"}});
  EXPECT_THAT(show(sc), ElementsAre("echo a b c 1 d e f $HOME  xyz"));
  EXPECT_EQ(sc.commands[0].argv.size(), 7u);
}

TEST(Shell, KnownVariablesExpandUnknownStay) {
  Vars v{{"X", "1"}, {"UNSET", std::nullopt}};
  auto sc = split("echo $X ${X} ${UNSET:-dflt} $UNKNOWN $(date) `id` $1", v);
  EXPECT_THAT(show(sc), ElementsAre("echo 1 1 dflt $UNKNOWN $(date) `id` $1"));
  EXPECT_TRUE(sc.commands[0].argv[4].unresolved);
  EXPECT_FALSE(sc.commands[0].argv[1].unresolved);
}

TEST(Shell, AssignmentPrefixes) {
  EXPECT_THAT(show(split("A=1 B=\"x y\" make install && C=2")), ElementsAre("{A=1}{B=x y} make install", "&&{C=2}"));
}

TEST(Shell, ShDashCIsRecursedWithMappedOffsets) {
  std::string s = "bash -euxo pipefail -c 'apt-get update && ./efa_installer.sh -y' && true";
  auto sc = split(s);
  EXPECT_THAT(show(sc), ElementsAre("bash -euxo pipefail -c apt-get update && ./efa_installer.sh -y",
                                    "[1] apt-get update", "&&[1] ./efa_installer.sh -y", "&& true"));
  EXPECT_EQ(sc.commands[2].argv[0].span.offset, s.find("./efa"));
  EXPECT_EQ(sc.commands[2].parent, 0);
}

TEST(Shell, NestedDoubleQuotedShDashC) {
  auto sc = split("sh -c \"sh -c 'echo in'\"");
  EXPECT_THAT(show(sc), ElementsAre("sh -c sh -c 'echo in'", "[1] sh -c echo in", "[2] echo in"));
}

TEST(Shell, KeywordsSubshellsAndGroups) {
  auto sc = split("if [ -f x ]; then apt-get update; fi && (cd /tmp && make) && { echo a; }\nfor i in 1 2; do echo $i; done");
  EXPECT_THAT(show(sc), ElementsAre("[ -f x ]", "; apt-get update", "&&[1] cd /tmp", "&&[1] make", "&& echo a",
                                    "; echo $i"));
}

TEST(Shell, RedirectionsAreNotArguments) {
  EXPECT_THAT(show(split("curl -o x http://h 2>&1 >/dev/null | tee log.txt")),
              ElementsAre("curl -o x http://h", "| tee log.txt"));
}

TEST(Shell, HeredocBodyIsSkipped) {
  EXPECT_THAT(show(split("cat <<EOF > f\n./efa_installer.sh\nEOF\necho done")), ElementsAre("cat", "; echo done"));
}

TEST(Shell, CommentsEndAtNewline) {
  EXPECT_THAT(show(split("echo a # && rm -rf /\necho b")), ElementsAre("echo a", "; echo b"));
}

TEST(Shell, UnquotedExpansionIsFieldSplit) {
  Vars v{{"FLAGS", "-y  -g"}};
  EXPECT_THAT(show(split("x $FLAGS \"$FLAGS\"", v)), ElementsAre("x -y -g -y  -g"));
  EXPECT_EQ(split("x $FLAGS \"$FLAGS\"", v).commands[0].argv.size(), 4u);
}

TEST(Shell, UnterminatedQuoteThrows) {
  EXPECT_THROW(split("echo \"abc"), Error);
  EXPECT_THROW(split("echo $(date"), Error);
}

// Valid sh that the splitter refused: quotes inside `$( )` inside quotes
// are a new quoting context, and `\`` inside backquotes is escaped.
TEST(Shell, QuotesInsideCommandSubstitutionsInsideQuotes) {
  EXPECT_THAT(show(split("echo \"$(echo \")\")\" && b")), ElementsAre("echo $(echo \")\")", "&& b"));
  EXPECT_THAT(show(split("v=\"$(printf '%s' \"$(echo \"in'ner\")\")\"; b")),
              ElementsAre("{v=$(printf '%s' \"$(echo \"in'ner\")\")}", "; b"));
  EXPECT_THAT(show(split("echo `echo \\`date\\``; b")), ElementsAre("echo `echo \\`date\\``", "; b"));
}

TEST(Shell, CommandSubstitutionsNestedTooDeepAreRefused) {
  std::string s = "echo ";
  for (int k = 0; k < 300; ++k) s += "\"$(echo ";
  s += "x";
  for (int k = 0; k < 300; ++k) s += ")\"";
  try {
    split(s);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("command substitutions nested deeper than 200"), std::string::npos);
  }
}

}  // namespace
}  // namespace trainimg::recipes
