// SPDX-License-Identifier: GPL-3.0-or-later
// Expected results follow the docker CLI (moby/patternmatcher +
// ignorefile.ReadAll), including its quirks (`*.go` is top-level only,
// `!**/x` does not reopen an excluded directory).
#include "builder/dockerignore.h"

#include <gtest/gtest.h>

#include "common/error.h"

namespace trainimg::builder {
namespace {

DockerIgnore ig(std::string_view text) { return DockerIgnore::parse(".dockerignore", text); }

std::string error_of(std::string_view text) {
  try {
    ig(text);
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

TEST(DockerIgnore, StarStaysInOneDirectory) {
  auto d = ig("*.go\n");
  EXPECT_TRUE(d.excluded("main.go"));
  EXPECT_FALSE(d.excluded("cmd/main.go"));
  EXPECT_FALSE(d.excluded("main.gox"));
}

TEST(DockerIgnore, DoubleStarSpansDirectories) {
  auto d = ig("**/*.go\n");
  EXPECT_TRUE(d.excluded("main.go"));
  EXPECT_TRUE(d.excluded("a/b/c/main.go"));
  EXPECT_FALSE(d.excluded("a/b/main.c"));
  auto mid = ig("a/**/b\n");
  EXPECT_TRUE(mid.excluded("a/b"));
  EXPECT_TRUE(mid.excluded("a/x/y/b"));
  EXPECT_TRUE(mid.excluded("a/x/b/inside"));  // parent a/x/b matches
  EXPECT_FALSE(mid.excluded("a/xb"));
}

TEST(DockerIgnore, AloneDoubleStarExcludesEverything) {
  auto d = ig("**\n");
  EXPECT_TRUE(d.excluded("x"));
  EXPECT_TRUE(d.excluded("a/b/c"));
}

TEST(DockerIgnore, TrailingDoubleStarIsAPrefixTest) {
  auto d = ig("build**\n");
  EXPECT_TRUE(d.excluded("build"));
  EXPECT_TRUE(d.excluded("buildx/y"));
  EXPECT_FALSE(d.excluded("src/build"));
  auto dir = ig("docs/**\n");
  EXPECT_TRUE(dir.excluded("docs/a/b.md"));
  EXPECT_FALSE(dir.excluded("docs"));  // the directory itself is still sent (empty)
}

TEST(DockerIgnore, LeadingDoubleStarWithLiteralRestIsASuffixTest) {
  auto d = ig("**/.git\n");
  EXPECT_TRUE(d.excluded(".git"));
  EXPECT_TRUE(d.excluded("vendor/lib/.git/config"));
  EXPECT_FALSE(d.excluded("x.git"));
  // `**foo` is a plain suffix test in the CLI: `barfoo` matches too.
  EXPECT_TRUE(ig("**foo\n").excluded("barfoo"));
}

TEST(DockerIgnore, ParentDirectoryMatchExcludesItsContents) {
  auto d = ig("node_modules\ndata/*\n");
  EXPECT_TRUE(d.excluded("node_modules/x/y.js"));
  EXPECT_FALSE(d.excluded("src/node_modules/y.js"));
  EXPECT_TRUE(d.excluded("data/raw/big.bin"));  // data/raw matches data/*
}

TEST(DockerIgnore, QuestionMarkAndClassesDoNotCrossSlashExceptClasses) {
  auto q = ig("a?c\n");
  EXPECT_TRUE(q.excluded("abc"));
  EXPECT_FALSE(q.excluded("a/c"));
  EXPECT_TRUE(ig("a?c\n").excluded("a\xc3\xa9" "c"));  // one UTF-8 character
  auto cls = ig("[a-c]x\nn[^0-9]\n");
  EXPECT_TRUE(cls.excluded("bx"));
  EXPECT_FALSE(cls.excluded("dx"));
  EXPECT_TRUE(cls.excluded("nz"));
  EXPECT_FALSE(cls.excluded("n5"));
}

TEST(DockerIgnore, BackslashEscapesAMetacharacter) {
  auto d = ig("\\*.txt\n");
  EXPECT_TRUE(d.excluded("*.txt"));
  EXPECT_FALSE(d.excluded("a.txt"));
}

TEST(DockerIgnore, ExceptionsReincludeAndTheLastMatchWins) {
  auto d = ig("*.md\n!README.md\n");
  EXPECT_TRUE(d.excluded("CHANGES.md"));
  EXPECT_FALSE(d.excluded("README.md"));
  auto order = ig("!README.md\n*.md\n");
  EXPECT_TRUE(order.excluded("README.md"));
  auto again = ig("docs\n!docs/keep.txt\ndocs/keep.txt\n");
  EXPECT_TRUE(again.excluded("docs/keep.txt"));
}

TEST(DockerIgnore, ExceptionUnderAnExcludedDirectoryReopensIt) {
  auto d = ig("docs\n!docs/api/keep.md\n");
  EXPECT_TRUE(d.excluded("docs"));
  EXPECT_TRUE(d.excluded("docs/other.md"));
  EXPECT_FALSE(d.excluded("docs/api/keep.md"));
  EXPECT_TRUE(d.must_descend("docs"));
  EXPECT_TRUE(d.must_descend("docs/api"));
  EXPECT_FALSE(d.must_descend("src"));
  // The CLI's descent test is a literal prefix: `!**/keep.md` does not reopen.
  EXPECT_FALSE(ig("docs\n!**/keep.md\n").must_descend("docs"));
}

TEST(DockerIgnore, PatternsAreCleanedAndLeadingSlashTrimmed) {
  auto d = ig("\xEF\xBB\xBF# comment\n\n   /build/  \n./a/../out\n! /tmp/x\n");
  ASSERT_EQ(d.patterns().size(), 3u);
  EXPECT_EQ(d.patterns()[0].text(), "build");
  EXPECT_EQ(d.patterns()[0].line(), 3);
  EXPECT_EQ(d.patterns()[1].text(), "out");
  EXPECT_EQ(d.patterns()[2].text(), "tmp/x");
  EXPECT_TRUE(d.patterns()[2].exception());
  EXPECT_TRUE(d.excluded("build/x.o"));
  EXPECT_TRUE(d.excluded("out"));
}

TEST(DockerIgnore, KeepAddsAnExceptionOnlyWhenExcluded) {
  auto d = ig("*\n");
  EXPECT_TRUE(d.excluded("Dockerfile"));
  d.keep("Dockerfile");
  d.keep(".dockerignore");
  EXPECT_FALSE(d.excluded("Dockerfile"));
  EXPECT_FALSE(d.excluded(".dockerignore"));
  EXPECT_TRUE(d.excluded("src"));
  auto none = ig("*.o\n");
  none.keep("Dockerfile");
  EXPECT_EQ(none.patterns().size(), 1u);
}

TEST(DockerIgnore, BadPatternsArePositionedErrors) {
  EXPECT_EQ(error_of("ok\nfoo[\n"), ".dockerignore:2:1: bad .dockerignore pattern 'foo[': syntax error in pattern "
                                    "(unterminated '[')");
  EXPECT_EQ(error_of("[]x\n"), ".dockerignore:1:1: bad .dockerignore pattern '[]x': syntax error in pattern (bad "
                               "character class)");
  EXPECT_EQ(error_of("a\\\n"), ".dockerignore:1:1: bad .dockerignore pattern 'a\\': syntax error in pattern "
                               "(trailing '\\')");
  EXPECT_EQ(error_of("#c\n!\n"), ".dockerignore:2:1: bad .dockerignore pattern '!': illegal exclusion pattern: \"!\"");
}

TEST(CleanPath, FollowsGoPathClean) {
  EXPECT_EQ(clean_path(""), ".");
  EXPECT_EQ(clean_path("a//b/./c/.."), "a/b");
  EXPECT_EQ(clean_path("../a"), "../a");
  EXPECT_EQ(clean_path("/../a/"), "/a");
  EXPECT_EQ(clean_path("./"), ".");
}

}  // namespace
}  // namespace trainimg::builder
