// SPDX-License-Identifier: GPL-3.0-or-later
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "recipes/rules/test_util.h"

namespace trainimg::recipes::testing {
namespace {
using ::testing::ElementsAre;
using ::testing::IsEmpty;

TEST(EfaAptUpdate, QuietWhenUpdateIsInTheSameRun) { EXPECT_THAT(hits(kSeedShort, "efa-apt-update"), IsEmpty()); }

TEST(EfaAptUpdate, FiresWhenUpdateIsInASeparateRun) {
  std::string df =
      "FROM nvcr.io/nvidia/pytorch:26.08-py3\n"
      "RUN apt-get update\n"
      "RUN cd /tmp/aws-efa-installer && ./efa_installer.sh -y -g --skip-kmod --skip-limit-conf --no-verify\n";
  EXPECT_THAT(hits(df, "efa-apt-update"), ElementsAre("3:34 error"));
  auto d = lint_dockerfile(SourceFile("Dockerfile", df), {});
  EXPECT_EQ(d[0].message,
            "efa_installer.sh runs without apt-get update earlier in the same RUN (the apt-get update on line 2 is in "
            "another RUN, another layer)");
  EXPECT_EQ(d[0].length, 18);
}

// The other RUN's command is named as written (public aws-do-eks efaburn image).
TEST(EfaAptUpdate, NamesAptUpdateAsWritten) {
  std::string df =
      "FROM ubuntu:20.04\n"
      "RUN apt update && apt install curl -y\n"
      "RUN cd aws-efa-installer && ./efa_installer.sh -y -g -d --skip-kmod --skip-limit-conf --no-verify\n";
  auto d = lint_dockerfile(SourceFile("Dockerfile", df), {});
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(
      d[0].message,
      "efa_installer.sh runs without apt-get update earlier in the same RUN (the apt update on line 2 is in "
      "another RUN, another layer)");
}

// aws-samples/aws-efa-eks examples/tensorflow/Dockerfile: the other RUN starts
// two lines above its apt-get update; the message named the RUN's line.
TEST(EfaAptUpdate, NamesTheLineOfTheUpdateNotOfItsRun) {
  std::string df =
      "FROM nvcr.io/nvidia/tensorflow:22.12-tf1-py3\n"
      "RUN wget -qO - https://example.invalid/nvidia.pub | apt-key add - && \\\n"
      "    echo deb > /etc/apt/sources.list.d/nsight.list && \\\n"
      "    apt-get update -y\n"
      "RUN cd /tmp/aws-efa-installer && ./efa_installer.sh -y -g --skip-kmod --skip-limit-conf --no-verify\n";
  auto d = lint_dockerfile(SourceFile("Dockerfile", df), {});
  ASSERT_FALSE(d.empty());
  EXPECT_EQ(d[0].rule_id, "efa-apt-update");
  EXPECT_EQ(d[0].message,
            "efa_installer.sh runs without apt-get update earlier in the same RUN (the apt-get update on "
            "line 4 is in "
            "another RUN, another layer)");
}

TEST(EfaAptUpdate, FiresWhenUpdateComesAfterTheInstaller) {
  std::string df = replace(kSeedShort, "RUN apt-get update \\", "RUN apt-get -qq clean \\");
  df = replace(df, "&& cd / &&", "&& apt-get update && cd / &&");
  EXPECT_THAT(hits(df, "efa-apt-update"), ElementsAre("9:5 error"));
}

TEST(EfaAptUpdate, FiresWhenListsAreWipedBetweenUpdateAndInstaller) {
  std::string df = replace(kSeedShort, " && cd /tmp \\", " && rm -rf /var/lib/apt/lists/* && cd /tmp \\");
  EXPECT_THAT(hits(df, "efa-apt-update"), ElementsAre("5:5 error"));
}

TEST(EfaAptUpdate, QuietWhenListsAreWipedAfterTheInstaller) {
  // The seed itself removes /var/lib/apt/lists/* after the installer.
  EXPECT_THAT(hits(kSeedShort, "efa-apt-update"), IsEmpty());
}

TEST(EfaAptUpdate, UpdateInsideShDashCCounts) {
  std::string df =
      "FROM ubuntu:24.04\n"
      "RUN sh -c 'apt-get -o Acquire::Retries=3 update' && ./efa_installer.sh -y -g -k -l -n\n";
  EXPECT_THAT(hits(df, "efa-apt-update"), IsEmpty());
}

TEST(EfaAptUpdate, UpdateOnlyEchoedDoesNotCount) {
  std::string df =
      "FROM ubuntu:24.04\n"
      "RUN echo apt-get update && ./efa_installer.sh -y -g -k -l -n\n";
  EXPECT_THAT(hits(df, "efa-apt-update"), ElementsAre("2:28 error"));
}

// On an RPM image the installer uses yum/dnf, which fetch their own
// metadata: seed 002's empty apt list cannot happen.
TEST(EfaAptUpdate, QuietOnAnRpmImage) {
  const std::string run = "RUN cd /tmp/aws-efa-installer && ./efa_installer.sh -y -g -k -l -n\n";
  EXPECT_THAT(hits("FROM nvidia/cuda:12.8.1-devel-amzn2023\n" + run, "efa-apt-update"), IsEmpty());
  EXPECT_THAT(hits("FROM public.ecr.aws/amazonlinux/amazonlinux:2023\n" + run, "efa-apt-update"), IsEmpty());
  EXPECT_THAT(hits("FROM registry.access.redhat.com/ubi9/ubi:9.4\n" + run, "efa-apt-update"), IsEmpty());
  // A base whose name says nothing: the package manager the RUNs use does.
  EXPECT_THAT(hits("ARG BASE\nFROM ${BASE}\nRUN dnf install -y tar\n" + run, "efa-apt-update"), IsEmpty());
  EXPECT_THAT(hits("ARG BASE\nFROM ${BASE}\nRUN dnf install -y tar && apt-get install -y git\n" + run,
                   "efa-apt-update"),
              ElementsAre("4:34 error"));
  EXPECT_THAT(hits("FROM ubuntu:24.04\n" + run, "efa-apt-update"), ElementsAre("2:34 error"));
}

TEST(EfaAptUpdate, SuppressedByPragmaOnTheLineBefore) {
  std::string df =
      "FROM ubuntu:24.04\n"
      "# trainimg: ignore=efa-apt-update\n"
      "RUN ./efa_installer.sh -y -g -k -l -n\n";
  EXPECT_THAT(hits(df, "efa-apt-update"), IsEmpty());
}

}  // namespace
}  // namespace trainimg::recipes::testing
