// SPDX-License-Identifier: GPL-3.0-or-later
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "recipes/rules/test_util.h"

namespace trainimg::recipes::testing {
namespace {
using ::testing::ElementsAre;
using ::testing::IsEmpty;

std::string with_flags(const std::string& flags) {
  return "FROM ubuntu:24.04\n"
         "RUN apt-get update && ./efa_installer.sh " + flags + "\n";
}

TEST(EfaContainerFlags, QuietOnTheSeedFlags) { EXPECT_THAT(hits(kSeedShort, "efa-container-flags"), IsEmpty()); }

TEST(EfaContainerFlags, ShortSpellingsAndClustersCount) {
  EXPECT_THAT(hits(with_flags("-y -g -k -l -n"), "efa-container-flags"), IsEmpty());
  EXPECT_THAT(hits(with_flags("-ygkln"), "efa-container-flags"), IsEmpty());
  EXPECT_THAT(hits(with_flags("--yes --enable-gdr --skip-k --skip-l --no-v"), "efa-container-flags"), IsEmpty());
}

TEST(EfaContainerFlags, FiresForMissingSkipKmodAndNoVerify) {
  std::string df = with_flags("-y -g --skip-limit-conf");
  EXPECT_THAT(hits(df, "efa-container-flags"), ElementsAre("2:23 error"));
  auto d = lint_dockerfile(SourceFile("Dockerfile", df), {});
  EXPECT_EQ(d[0].message, "efa_installer.sh lacks the container flag(s) --skip-kmod, --no-verify");
}

TEST(EfaContainerFlags, WarnsForMissingG) {
  EXPECT_THAT(hits(with_flags("-y --skip-kmod --skip-limit-conf --no-verify"), "efa-container-flags"),
              ElementsAre("2:23 warning"));
}

TEST(EfaContainerFlags, FlagInsideAnEchoStringDoesNotCount) {
  std::string df =
      "FROM ubuntu:24.04\n"
      "RUN apt-get update && echo \"--skip-kmod --skip-limit-conf --no-verify\" && ./efa_installer.sh -y -g\n";
  EXPECT_THAT(hits(df, "efa-container-flags"), ElementsAre("2:75 error"));
}

TEST(EfaContainerFlags, AmbiguousLongPrefixDoesNotCount) {
  // getopt_long rejects --skip (skip-limit-conf, skip-kmod, skip-mpi, ...).
  EXPECT_THAT(hits(with_flags("-y -g -n --skip"), "efa-container-flags"), ElementsAre("2:23 error"));
}

TEST(EfaContainerFlags, FlagsAfterDoubleDashDoNotCount) {
  EXPECT_THAT(hits(with_flags("-y -g -n -- -k -l"), "efa-container-flags"), ElementsAre("2:23 error"));
}

TEST(EfaContainerFlags, FlagsFromAnArgAreSplitIntoWords) {
  std::string df =
      "FROM ubuntu:24.04\n"
      "ARG EFA_FLAGS=\"-y -g --skip-kmod --skip-limit-conf --no-verify\"\n"
      "RUN apt-get update && ./efa_installer.sh $EFA_FLAGS\n";
  EXPECT_THAT(hits(df, "efa-container-flags"), IsEmpty());
}

TEST(EfaContainerFlags, BashRunningTheInstallerIsTheInstaller) {
  EXPECT_THAT(hits("FROM ubuntu:24.04\nRUN apt-get update && sudo -E bash efa_installer.sh -y\n", "efa-container-flags"),
              ElementsAre("2:36 warning", "2:36 error"));
}

}  // namespace
}  // namespace trainimg::recipes::testing
