// SPDX-License-Identifier: GPL-3.0-or-later
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "recipes/rules/test_util.h"

namespace trainimg::recipes::testing {
namespace {
using ::testing::ElementsAre;
using ::testing::IsEmpty;

TEST(NcclNetPlugin, QuietForOfi) {
  EXPECT_THAT(hits(kSeedShort + "ENV NCCL_NET_PLUGIN=ofi\n", "nccl-net-plugin"), IsEmpty());
  EXPECT_THAT(hits(kSeedShort + "ARG P=ofi\nENV NCCL_NET_PLUGIN=\"${P}\"\n", "nccl-net-plugin"), IsEmpty());
}

TEST(NcclNetPlugin, FiresForAnotherPlugin) {
  EXPECT_THAT(hits(kSeedShort + "ENV NCCL_DEBUG=INFO NCCL_NET_PLUGIN=aws-ofi\n", "nccl-net-plugin"),
              ElementsAre("12:37 error"));
}

TEST(NcclNetPlugin, FiresWhenEmptied) {
  EXPECT_THAT(hits(kSeedShort + "ENV NCCL_NET_PLUGIN=\n", "nccl-net-plugin"), ElementsAre("12:5 error"));
  EXPECT_THAT(hits(kSeedShort + "ENV NCCL_NET_PLUGIN \"\"\n", "nccl-net-plugin"), ElementsAre("12:5 error"));
}

TEST(NcclNetPlugin, QuietWhenSetOnlyInABuilderStage) {
  std::string df =
      "FROM ubuntu:24.04 AS build\n"
      "ENV NCCL_NET_PLUGIN=none\n"
      "FROM nvcr.io/nvidia/pytorch:26.08-py3\n"
      "COPY --from=build /out /opt/out\n";
  EXPECT_THAT(hits(df, "nccl-net-plugin"), IsEmpty());
}

TEST(NcclNetPlugin, FiresWhenInheritedFromAParentStage) {
  std::string df =
      "FROM nvcr.io/nvidia/pytorch:26.08-py3 AS base\n"
      "ENV NCCL_NET_PLUGIN=none\n"
      "FROM base\n"
      "RUN true\n";
  EXPECT_THAT(hits(df, "nccl-net-plugin"), ElementsAre("2:21 error"));
}

}  // namespace
}  // namespace trainimg::recipes::testing
