// SPDX-License-Identifier: GPL-3.0-or-later
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "recipes/rules/test_util.h"

namespace trainimg::recipes::testing {
namespace {
using ::testing::ElementsAre;
using ::testing::IsEmpty;

const std::string kEnv = "ENV LD_LIBRARY_PATH=/opt/amazon/ofi-nccl/lib:/opt/amazon/efa/lib:${LD_LIBRARY_PATH}\n";

TEST(EfaLdLibraryPath, QuietOnTheSeed) { EXPECT_THAT(hits(kSeedShort, "efa-ld-library-path"), IsEmpty()); }

TEST(EfaLdLibraryPath, FiresWhenNoEnvFollowsTheInstaller) {
  std::string df = replace(kSeedShort, kEnv, "");
  EXPECT_THAT(hits(df, "efa-ld-library-path"), ElementsAre("9:5 error"));
}

TEST(EfaLdLibraryPath, EnvBeforeTheInstallerDoesNotCount) {
  std::string df = replace(kSeedShort, kEnv, "");
  df = replace(df, "ARG EFA_INSTALLER_VERSION=1.50.0\n", "ARG EFA_INSTALLER_VERSION=1.50.0\n" + kEnv);
  EXPECT_THAT(hits(df, "efa-ld-library-path"), ElementsAre("10:5 error"));
}

TEST(EfaLdLibraryPath, FiresWhenTheOrderIsSwapped) {
  std::string df = replace(kSeedShort, "/opt/amazon/ofi-nccl/lib:/opt/amazon/efa/lib", "/opt/amazon/efa/lib:/opt/amazon/ofi-nccl/lib");
  EXPECT_THAT(hits(df, "efa-ld-library-path"), ElementsAre("11:21 error"));
}

TEST(EfaLdLibraryPath, FiresWhenALaterEnvPrependsAnotherPath) {
  std::string df = kSeedShort + "ENV LD_LIBRARY_PATH=/usr/local/lib:$LD_LIBRARY_PATH\n";
  EXPECT_THAT(hits(df, "efa-ld-library-path"), ElementsAre("12:21 error"));
}

TEST(EfaLdLibraryPath, WarnsWhenTheInheritedValueIsDropped) {
  std::string df = replace(kSeedShort, ":${LD_LIBRARY_PATH}", ":/usr/local/cuda/lib64");
  EXPECT_THAT(hits(df, "efa-ld-library-path"), ElementsAre("11:21 warning"));
}

TEST(EfaLdLibraryPath, LaterEnvThatAppendsKeepsTheOrder) {
  std::string df = kSeedShort + "ENV LD_LIBRARY_PATH=${LD_LIBRARY_PATH}:/opt/extra/lib\n";
  EXPECT_THAT(hits(df, "efa-ld-library-path"), IsEmpty());
}

TEST(EfaLdLibraryPath, QuietWithoutAnInstaller) {
  EXPECT_THAT(hits("FROM ubuntu:24.04\nENV LD_LIBRARY_PATH=/usr/lib\n", "efa-ld-library-path"), IsEmpty());
}

}  // namespace
}  // namespace trainimg::recipes::testing
