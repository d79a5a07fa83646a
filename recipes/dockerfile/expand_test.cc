// SPDX-License-Identifier: GPL-3.0-or-later
// Parameter expansion as BuildKit's shell lexer does it (moby/buildkit
// frontend/dockerfile/shell/lex.go); expected values from its lex_test.go
// where a case is there.
#include "recipes/dockerfile/expand.h"

#include <gtest/gtest.h>

#include "recipes/dockerfile/dockerfile.h"

namespace trainimg::recipes {
namespace {

struct Got {
  std::string text;
  bool unresolved = false;
};

Got expand(std::string_view s, const Vars& vars) {
  Got g;
  g.text = expand_vars(s, vars, '\\', &g.unresolved);
  return g;
}

// The same reference read by /bin/sh in a RUN script.
Got expand_sh(std::string_view s, const Vars& vars) {
  Got g;
  for (size_t i = 0; i < s.size();) {
    if (s[i] == '$')
      i = expand_reference(s, i, vars, '\\', g.text, g.unresolved, /*sh=*/true);
    else
      g.text += s[i++];
  }
  return g;
}

void expect_resolved(std::string_view s, const Vars& vars, const std::string& want) {
  Got g = expand(s, vars);
  EXPECT_EQ(g.text, want) << s;
  EXPECT_FALSE(g.unresolved) << s;
}

void expect_kept(std::string_view s, const Vars& vars) {
  Got g = expand(s, vars);
  EXPECT_EQ(g.text, s);
  EXPECT_TRUE(g.unresolved) << s;
}

TEST(Expand, TrimPrefixAndSuffixShortestAndLongest) {
  Vars v{{"CUDA_VERSION", "12.4.1"}, {"EFA_VERSION", "v1.38.0"}, {"S", "foobarbaz"}};
  expect_resolved("${CUDA_VERSION%%.*}", v, "12");
  expect_resolved("${CUDA_VERSION%.*}", v, "12.4");
  expect_resolved("${CUDA_VERSION#*.}", v, "4.1");
  expect_resolved("${CUDA_VERSION##*.}", v, "1");
  expect_resolved("${EFA_VERSION#v}", v, "1.38.0");
  expect_resolved("aws-efa-installer-${EFA_VERSION#v}.tar.gz", v, "aws-efa-installer-1.38.0.tar.gz");
  // BuildKit's reference examples.
  expect_resolved("${S#f*b}", v, "arbaz");
  expect_resolved("${S##f*b}", v, "az");
  expect_resolved("${S%b*}", v, "foobar");
  expect_resolved("${S%%b*}", v, "foo");
  // No match leaves the value; an empty pattern matches the empty string.
  expect_resolved("${S#x}", v, "foobarbaz");
  expect_resolved("${S%}", v, "foobarbaz");
  expect_resolved("${S##}", v, "foobarbaz");
}

TEST(Expand, GlobsAsLexTestGo) {
  expect_resolved("${FOO%%\\**}", {{"FOO", "xx**"}}, "xx");
  expect_resolved("${FOO#*x*y}", {{"FOO", "xxyy"}}, "y");
  expect_resolved("${FOO#*}", {{"FOO", "xxyy"}}, "xxyy");
  expect_resolved("${FOO##*x}", {{"FOO", "xxyy"}}, "yy");
  expect_resolved("${FOO#?\\?}", {{"FOO", "???y"}}, "?y");
  expect_resolved("${FOO%%\\**\\*}", {{"FOO", "a***yy*"}}, "a");
  expect_resolved("${FOO#$BAR}", {{"FOO", "xxyy"}, {"BAR", "x"}}, "xyy");
  expect_resolved("${FOO#$BAR}", {{"FOO", "xxyy"}, {"BAR", ""}}, "xxyy");
  expect_resolved("${FOO%%$BAR}", {{"FOO", "xxyy"}, {"BAR", ""}}, "xxyy");
  // Regular-expression characters are literal; `\}` is a `}`.
  expect_resolved("${FOO#()[]{\\}^$.\\*\\?|\\\\}", {{"FOO", "()[]{}^$.*?|\\x"}}, "x");
  // `*` and `?` do not cross a newline (Go's `.`).
  expect_resolved("${FOO#*b}", {{"FOO", "a\nb"}}, "a\nb");
}

TEST(Expand, Substitution) {
  Vars v{{"S", "foobarbaz"}};
  expect_resolved("${S/ba/fo}", v, "fooforbaz");
  expect_resolved("${S//ba/fo}", v, "fooforfoz");
  expect_resolved("${S/b*/X}", v, "fooX");  // stars are greedy
  expect_resolved("${S//o/}", v, "fbarbaz");
  expect_resolved("${S/nothing/X}", v, "foobarbaz");
  Vars w{{"FOO", "/foo*/*/*.txt"}, {"NEEDLE", "\\*/"}};
  expect_resolved("${FOO/$NEEDLE/.} - ${FOO//$NEEDLE/.}", w, "/foo.*/*.txt - /foo..*.txt");
  Vars t{{"FOO", "/tmp/tmp/bar.txt"}, {"NEEDLE", "/tmp"}};
  expect_resolved("${FOO/$NEEDLE/} - ${FOO//$NEEDLE/}", t, "/tmp/bar.txt - /bar.txt");
  Vars q{{"FOO", "/a/foo/b/c.txt"}, {"NEEDLE", "/?/"}, {"REPLACEMENT", "/"}};
  expect_resolved("${FOO/$NEEDLE/$REPLACEMENT} - ${FOO//$NEEDLE/$REPLACEMENT}", q,
                  "/foo/b/c.txt - /foo/c.txt");
  // Escaped separators: the escape stays in the replacement.
  expect_resolved("${FOO//\\//\\/}", {{"FOO", "/tmp/foo.txt"}}, "\\/tmp\\/foo.txt");
  // An empty pattern matches at the start (first) or between every byte (all).
  expect_resolved("${FOO/$BAR/ww}", {{"FOO", "xxyy"}, {"BAR", ""}}, "wwxxyy");
  expect_resolved("${FOO///}", {{"FOO", "xxyy"}}, "xxyy");
  expect_resolved("${FOO///-}", {{"FOO", "ab"}}, "-a-b-");
  expect_resolved("${V//./_}", {{"V", "12.4.1"}}, "12_4_1");
}

// mosaicml/composer docker/Dockerfile:
//   ARG BASE_IMAGE=${CUDA_VERSION:+"nvidia/cuda:${CUDA_VERSION}-cudnn8-devel-ubuntu${UBUNTU_VERSION}"}
// BuildKit removes the quotes of the word (the base was read as `"nvidia/…"`).
TEST(Expand, QuotesInTheWordAreRemoved) {
  Vars v{{"CUDA_VERSION", "11.3.1"}, {"UBUNTU_VERSION", "22.04"}, {"EMPTY", ""}};
  expect_resolved("${CUDA_VERSION:+\"nvidia/cuda:${CUDA_VERSION}-cudnn8-devel-ubuntu${UBUNTU_VERSION}\"}", v,
                  "nvidia/cuda:11.3.1-cudnn8-devel-ubuntu22.04");
  expect_resolved("${EMPTY:-\"ubuntu:${UBUNTU_VERSION}\"}", v, "ubuntu:22.04");
  expect_resolved("${EMPTY:-'$UBUNTU_VERSION'}", v, "$UBUNTU_VERSION");
  expect_resolved("${EMPTY:-\"a\\\"b\"}", v, "a\"b");
}

// BuildKit's processStopOn('}'): a quoted `}` does not close the reference,
// a bare `{` does not nest.
TEST(Expand, BracesInQuotesDoNotCloseTheReference) {
  Vars v{{"EMPTY", ""}, {"A", "1"}};
  expect_resolved("${EMPTY:-\"}\"}", v, "}");
  expect_resolved("${EMPTY:-'}'}x", v, "}x");
  expect_resolved("${EMPTY:-\"${A:-\"}\"}\"}", v, "1");
  expect_resolved("${EMPTY:-{a}}", v, "{a}");  // word `{a`, then a literal `}`
  expect_resolved("${A:+{}}", v, "{}");
  expect_kept("${EMPTY:-\"}", v);  // unclosed quote: unclosed reference
}

TEST(Expand, MandatoryValue) {
  Vars v{{"A", "1"}, {"EMPTY", ""}};
  expect_resolved("${A?}", v, "1");
  expect_resolved("${A:?must be set}", v, "1");
  expect_resolved("${EMPTY?}", v, "");
  // The build fails there: nothing to resolve to.
  expect_kept("${EMPTY:?empty}", v);
  expect_kept("${NOPE?unset}", v);
}

TEST(Expand, UnknownOrUnsupportedStaysAsWritten) {
  Vars v{{"A", "1.2"}, {"DECLARED", std::nullopt}};
  // Unknown variable (base image ENV) and ARG without default (--build-arg
  // may set it): never guessed.
  expect_kept("${CUDA_VERSION%%.*}", v);
  expect_kept("${DECLARED#v}", v);
  expect_kept("${DECLARED/a/b}", v);
  expect_kept("${DECLARED?x}", v);
  // A pattern built from an unknown variable.
  expect_kept("${A#$NOPE}", v);
  expect_kept("${A/$NOPE/x}", v);
  expect_kept("${A/x/$NOPE}", v);
  // BuildKit refuses these ("unsupported modifier", bad escape, missing `/`).
  expect_kept("${A:#1}", v);
  expect_kept("${A:%%.*}", v);
  expect_kept("${A:/1/2}", v);
  expect_kept("${A=x}", v);
  expect_kept("${A#\\x}", v);
  expect_kept("${A//1}", v);
  // Quotes in a pattern, `$1` in an all-replacement, non-ASCII: not guessed.
  expect_kept("${A#'1'}", v);
  expect_kept("${A//1/$$}", v);
  expect_kept("${B#x}", {{"B", "\xc3\xa9x"}});
  // Patterns too long for the matcher, and matches that would take too
  // long, are not guessed either.
  std::string longer = "${A#" + std::string(5000, '?') + "}";
  expect_kept(longer, v);
  std::string slow = "${S#" + std::string(12, '*') + "x}";
  expect_kept(slow, {{"S", std::string(200, 'a')}});
}

TEST(Expand, ShellReadsTrimsButNotSubstitutions) {
  Vars v{{"V", "12.4.1"}};
  Got g = expand_sh("${V%%.*}", v);
  EXPECT_EQ(g.text, "12");
  EXPECT_FALSE(g.unresolved);
  // dash (Debian's and Ubuntu's /bin/sh) has no ${V/x/y}.
  g = expand_sh("${V//./_}", v);
  EXPECT_EQ(g.text, "${V//./_}");
  EXPECT_TRUE(g.unresolved);
  // `[…]` is a bracket expression for sh, a literal for BuildKit.
  g = expand_sh("${V#[0-9]}", v);
  EXPECT_TRUE(g.unresolved);
  expect_resolved("${X#[0-9]}", {{"X", "[0-9]1"}}, "1");
  // A value with a newline: sh's `*` crosses it, Go's does not.
  g = expand_sh("${N#*b}", {{"N", "a\nb"}});
  EXPECT_TRUE(g.unresolved);
}

}  // namespace
}  // namespace trainimg::recipes
