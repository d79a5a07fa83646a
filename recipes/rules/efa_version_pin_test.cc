// SPDX-License-Identifier: GPL-3.0-or-later
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "recipes/rules/test_util.h"

namespace trainimg::recipes::testing {
namespace {
using ::testing::ElementsAre;
using ::testing::IsEmpty;

LintOptions expect(const std::string& v) {
  LintOptions o;
  o.expect_efa_installer = v;
  return o;
}

TEST(EfaVersionPin, QuietForAPinnedArg) {
  EXPECT_THAT(hits(kSeedShort, "efa-version-pin"), IsEmpty());
  EXPECT_THAT(hits(kSeedShort, "efa-version-pin", expect("1.50.0")), IsEmpty());
}

TEST(EfaVersionPin, WarnsForLatest) {
  std::string df = replace(kSeedShort, "ARG EFA_INSTALLER_VERSION=1.50.0", "ARG EFA_INSTALLER_VERSION=latest");
  EXPECT_THAT(hits(df, "efa-version-pin"), ElementsAre("6:19 warning"));
}

TEST(EfaVersionPin, WarnsForAnArgWithoutDefault) {
  std::string df = replace(kSeedShort, "ARG EFA_INSTALLER_VERSION=1.50.0", "ARG EFA_INSTALLER_VERSION");
  EXPECT_THAT(hits(df, "efa-version-pin"), ElementsAre("6:19 warning"));
}

TEST(EfaVersionPin, ErrorWhenItDiffersFromExpect) {
  EXPECT_THAT(hits(kSeedShort, "efa-version-pin", expect("1.49.0")), ElementsAre("6:19 error"));
  auto d = lint_dockerfile(SourceFile("Dockerfile", kSeedShort), expect("1.49.0"));
  EXPECT_EQ(d[0].message, "the image installs EFA installer 1.50.0 but the host has 1.49.0");
}

TEST(EfaVersionPin, DefaultFromDollarBraceColonDashIsPinned) {
  std::string df = replace(kSeedShort, "ARG EFA_INSTALLER_VERSION=1.50.0", "ARG EFA_INSTALLER_VERSION");
  df = replace(df, "aws-efa-installer-${EFA_INSTALLER_VERSION}.tar.gz \\\n && tar",
               "aws-efa-installer-${EFA_INSTALLER_VERSION:-1.50.0}.tar.gz \\\n && tar");
  // curl names a pinned file; tar (same RUN) is not reported twice.
  EXPECT_THAT(hits(df, "efa-version-pin"), IsEmpty());
}

TEST(EfaVersionPin, LiteralVersionInALiteralUrl) {
  std::string df =
      "FROM ubuntu:24.04\n"
      "RUN curl -O https://efa-installer.amazonaws.com/aws-efa-installer-1.47.0.tar.gz\n";
  EXPECT_THAT(hits(df, "efa-version-pin"), IsEmpty());
  EXPECT_THAT(hits(df, "efa-version-pin", expect("1.50.0")), ElementsAre("2:13 error"));
}

// `${EFA_VERSION#v}` (a tag-style version with its `v` stripped) is expanded
// as BuildKit and sh do: the file is pinned and its version compared.
TEST(EfaVersionPin, TrimmedVersionIsPinned) {
  std::string df =
      "FROM ubuntu:24.04\n"
      "ARG EFA_VERSION=v1.47.0\n"
      "RUN curl -O https://efa-installer.amazonaws.com/aws-efa-installer-${EFA_VERSION#v}.tar.gz\n";
  EXPECT_THAT(hits(df, "efa-version-pin"), IsEmpty());
  EXPECT_THAT(hits(df, "efa-version-pin", expect("1.47.0")), IsEmpty());
  EXPECT_THAT(hits(df, "efa-version-pin", expect("1.50.0")), ElementsAre("3:13 error"));
  // On an ARG without default the trimmed value stays unknown: not pinned.
  std::string unpinned = replace(df, "ARG EFA_VERSION=v1.47.0", "ARG EFA_VERSION");
  EXPECT_THAT(hits(unpinned, "efa-version-pin"), ElementsAre("3:13 warning"));
}

}  // namespace
}  // namespace trainimg::recipes::testing
