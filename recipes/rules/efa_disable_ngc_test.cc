// SPDX-License-Identifier: GPL-3.0-or-later
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "recipes/rules/test_util.h"

namespace trainimg::recipes::testing {
namespace {
using ::testing::ElementsAre;
using ::testing::IsEmpty;

TEST(EfaDisableNgc, FiresOnAnNgcBase) {
  std::string df = replace(kSeedShort, "--no-verify \\", "--no-verify --disable-ngc \\");
  EXPECT_THAT(hits(df, "efa-disable-ngc"), ElementsAre("9:72 warning"));
}

TEST(EfaDisableNgc, QuietOnANonNgcBase) {
  std::string df = replace(kSeedShort, "FROM nvcr.io/nvidia/pytorch:26.08-py3", "FROM ubuntu:24.04");
  df = replace(df, "--no-verify \\", "--no-verify --disable-ngc \\");
  EXPECT_THAT(hits(df, "efa-disable-ngc"), IsEmpty());
}

TEST(EfaDisableNgc, NgcBaseSeenThroughAStageChain) {
  std::string df =
      "ARG BASE=nvcr.io/nvidia/pytorch:26.08-py3\n"
      "FROM ${BASE} AS base\n"
      "FROM base\n"
      "RUN apt-get update && ./efa_installer.sh -y -g -k -l -n --disable-ngc\n";
  EXPECT_THAT(hits(df, "efa-disable-ngc"), ElementsAre("4:57 warning"));
}

TEST(EfaDisableNgc, QuietWhenOnlyEchoed) {
  std::string df = replace(kSeedShort, " && cd / &&", " && echo --disable-ngc && cd / &&");
  EXPECT_THAT(hits(df, "efa-disable-ngc"), IsEmpty());
}

}  // namespace
}  // namespace trainimg::recipes::testing
