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

// Issue 25: NCCL loads a plugin named by its path; the seed keeps `ofi`.
TEST(NcclNetPlugin, WarnsWhenTheOfiPluginIsNamedByItsPath) {
  std::string df = kSeedShort + "ENV NCCL_NET_PLUGIN=/opt/amazon/ofi-nccl/lib/libnccl-net-ofi.so\n";
  EXPECT_THAT(hits(df, "nccl-net-plugin"), ElementsAre("12:21 warning"));
  auto d = lint_dockerfile(SourceFile("Dockerfile", df), {});
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(
      d[0].message,
      "NCCL_NET_PLUGIN names the OFI plugin by its library ('/opt/amazon/ofi-nccl/lib/libnccl-net-ofi.so'): "
      "NCCL loads it, but the seed keeps NCCL_NET_PLUGIN=ofi");
  // The default-named libnccl-net.so is the InfiniBand plugin: still an error.
  EXPECT_THAT(hits(kSeedShort + "ENV NCCL_NET_PLUGIN=/usr/lib/libnccl-net.so\n", "nccl-net-plugin"),
              ElementsAre("12:21 error"));
}

// The hint says the base sets NCCL_NET_PLUGIN=ofi only where the base is NGC.
TEST(NcclNetPlugin, HintNamesTheNgcBaseOnlyOnAnNgcBase) {
  auto hint_on = [](const std::string& from) {
    std::string df = "FROM " + from + "\nENV NCCL_NET_PLUGIN=none\n";
    EXPECT_THAT(hits(df, "nccl-net-plugin"), ElementsAre("2:21 error"));
    auto d = lint_dockerfile(SourceFile("Dockerfile", df), {});
    return d.empty() ? std::string() : d[0].hint;
  };
  EXPECT_EQ(hint_on("ubuntu:24.04"), "set NCCL_NET_PLUGIN=ofi");
  EXPECT_EQ(hint_on("nvcr.io/nvidia/pytorch:26.08-py3"),
            "remove the ENV (the NGC base sets NCCL_NET_PLUGIN=ofi) or set NCCL_NET_PLUGIN=ofi");
}

}  // namespace
}  // namespace trainimg::recipes::testing
