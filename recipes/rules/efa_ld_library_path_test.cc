// SPDX-License-Identifier: GPL-3.0-or-later
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "recipes/rules/test_util.h"

namespace trainimg::recipes::testing {
namespace {
using ::testing::ElementsAre;
using ::testing::IsEmpty;

const std::string kEnv =
    "ENV LD_LIBRARY_PATH=/opt/amazon/ofi-nccl/lib:/opt/amazon/efa/lib:${LD_LIBRARY_PATH}\n";

TEST(EfaLdLibraryPath, QuietOnTheSeed) {
  EXPECT_THAT(hits(kSeedShort, "efa-ld-library-path"), IsEmpty());
}

TEST(EfaLdLibraryPath, FiresWhenNoEnvFollowsTheInstaller) {
  std::string df = replace(kSeedShort, kEnv, "");
  EXPECT_THAT(hits(df, "efa-ld-library-path"), ElementsAre("9:5 error"));
}

// The final value is judged, wherever the ENV sits (issue 13).
TEST(EfaLdLibraryPath, EnvBeforeTheInstallerWithTheRightValueCounts) {
  std::string df = replace(kSeedShort, kEnv, "");
  df = replace(df, "ARG EFA_INSTALLER_VERSION=1.50.0\n", "ARG EFA_INSTALLER_VERSION=1.50.0\n" + kEnv);
  EXPECT_THAT(hits(df, "efa-ld-library-path"), IsEmpty());
}

// libfabric and the plugin are different libraries: their mutual order does not matter.
TEST(EfaLdLibraryPath, QuietWhenTheTwoInstallerDirsAreSwapped) {
  std::string df = replace(kSeedShort, "/opt/amazon/ofi-nccl/lib:/opt/amazon/efa/lib",
                           "/opt/amazon/efa/lib:/opt/amazon/ofi-nccl/lib");
  EXPECT_THAT(hits(df, "efa-ld-library-path"), IsEmpty());
}

TEST(EfaLdLibraryPath, FiresWhenALaterEnvPrependsADirWithAnotherLibfabric) {
  std::string df = kSeedShort + "ENV LD_LIBRARY_PATH=/usr/lib/x86_64-linux-gnu:$LD_LIBRARY_PATH\n";
  EXPECT_THAT(hits(df, "efa-ld-library-path"), ElementsAre("12:21 error"));
}

TEST(EfaLdLibraryPath, QuietWhenALaterEnvPrependsAnUnrelatedDir) {
  std::string df = kSeedShort + "ENV LD_LIBRARY_PATH=/opt/gdrcopy/lib:$LD_LIBRARY_PATH\n";
  EXPECT_THAT(hits(df, "efa-ld-library-path"), IsEmpty());
}

TEST(EfaLdLibraryPath, FiresWhenTheInheritedValueComesFirst) {
  std::string df =
      replace(kSeedShort, kEnv,
              "ENV LD_LIBRARY_PATH=$LD_LIBRARY_PATH:/opt/amazon/ofi-nccl/lib:/opt/amazon/efa/lib\n");
  EXPECT_THAT(hits(df, "efa-ld-library-path"), ElementsAre("11:21 error"));
}

// The shell idiom that adds the inherited value only where it is set reads as
// the value where it is (an NGC base sets it); the colon inside the braces is
// not a separator.
TEST(EfaLdLibraryPath, TheOnlyIfSetIdiomKeepsTheInheritedValueWhereItStands) {
  std::string after = replace(kSeedShort, kEnv,
                              "ENV LD_LIBRARY_PATH=\"/opt/amazon/ofi-nccl/lib:/opt/amazon/efa/lib"
                              "${LD_LIBRARY_PATH:+:${LD_LIBRARY_PATH}}\"\n");
  EXPECT_THAT(hits(after, "efa-ld-library-path"), IsEmpty());
  std::string before = replace(kSeedShort, kEnv,
                               "ENV LD_LIBRARY_PATH=${LD_LIBRARY_PATH:+${LD_LIBRARY_PATH}:}"
                               "/opt/amazon/ofi-nccl/lib:/opt/amazon/efa/lib\n");
  EXPECT_THAT(hits(before, "efa-ld-library-path"), ElementsAre("11:21 error"));
  std::string fallback = replace(kSeedShort, kEnv,
                                 "ENV LD_LIBRARY_PATH=/opt/amazon/ofi-nccl/lib:/opt/amazon/efa/lib:"
                                 "${LD_LIBRARY_PATH:-/usr/local/lib}\n");
  EXPECT_THAT(hits(fallback, "efa-ld-library-path"), IsEmpty());
}

// An ENV that only prepends keeps the verdict of the ENV before it: one finding, there.
TEST(EfaLdLibraryPath, PrependingEnvIsNotReportedAgain) {
  std::string df = replace(kSeedShort, kEnv, "ENV LD_LIBRARY_PATH=$LD_LIBRARY_PATH:/opt/amazon/efa/lib\n") +
                   "ENV LD_LIBRARY_PATH=/opt/gdrcopy/lib:$LD_LIBRARY_PATH\n";
  EXPECT_THAT(hits(df, "efa-ld-library-path"), ElementsAre("11:21 error"));
}

// Installer 1.41.0 (public AWS samples built aws-ofi-nccl themselves then): only libfabric is demanded.
TEST(EfaLdLibraryPath, OlderInstallerNeedsOnlyLibfabricFirst) {
  std::string df = replace(kSeedShort, "1.50.0", "1.41.0");
  df = replace(df, kEnv, "ENV LD_LIBRARY_PATH=/opt/amazon/efa/lib:${LD_LIBRARY_PATH}\n");
  EXPECT_THAT(hits(df, "efa-ld-library-path"), IsEmpty());
}

// 1.43-1.47 on Ubuntu: the plugin's Debian multiarch directory; the hint names it.
TEST(EfaLdLibraryPath, MultiarchPluginDirIsAcceptedAndNamedInTheHint) {
  std::string df = replace(kSeedShort, "1.50.0", "1.47.0");
  EXPECT_THAT(hits(replace(df, "/opt/amazon/ofi-nccl/lib:", "/opt/amazon/ofi-nccl/lib/x86_64-linux-gnu:"),
                   "efa-ld-library-path"),
              IsEmpty());
  df = replace(df, kEnv, "ENV LD_LIBRARY_PATH=/opt/amazon/efa/lib:${LD_LIBRARY_PATH}\n");
  auto d = lint_dockerfile(SourceFile("Dockerfile", df), {});
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].line, 11);
  EXPECT_EQ(d[0].column, 21);
  EXPECT_NE(d[0].hint.find("/opt/amazon/ofi-nccl/lib/x86_64-linux-gnu:/opt/amazon/efa/lib"),
            std::string::npos)
      << d[0].hint;
}

TEST(EfaLdLibraryPath, WarnsWhenTheInheritedValueIsDropped) {
  std::string df = replace(kSeedShort, ":${LD_LIBRARY_PATH}", ":/usr/local/cuda/lib64");
  EXPECT_THAT(hits(df, "efa-ld-library-path"), ElementsAre("11:21 warning"));
}

TEST(EfaLdLibraryPath, LaterEnvThatAppendsKeepsTheOrder) {
  std::string df = kSeedShort + "ENV LD_LIBRARY_PATH=${LD_LIBRARY_PATH}:/opt/extra/lib\n";
  EXPECT_THAT(hits(df, "efa-ld-library-path"), IsEmpty());
}

// A base without an EFA stack of its own has no older copies: the installer's
// /etc/ld.so.conf.d entry finds its libraries; only a shadowing directory is wrong.
TEST(EfaLdLibraryPath, CudaBaseNeedsNoEnvButNoShadowingDirFirst) {
  std::string df = replace(replace(kSeedShort, kEnv, ""), "nvcr.io/nvidia/pytorch:26.08-py3",
                           "nvidia/cuda:12.4.1-devel-ubuntu22.04");
  EXPECT_THAT(hits(df, "efa-ld-library-path"), IsEmpty());
  EXPECT_THAT(
      hits(df + "ENV LD_LIBRARY_PATH=/opt/aws-ofi-nccl/lib:$LD_LIBRARY_PATH\n", "efa-ld-library-path"),
      IsEmpty());
  EXPECT_THAT(
      hits(df + "ENV LD_LIBRARY_PATH=/usr/lib/x86_64-linux-gnu:/opt/amazon/efa/lib:$LD_LIBRARY_PATH\n",
           "efa-ld-library-path"),
      ElementsAre("11:21 error"));
}

// Seen in a public dynamo EFA image: libfabric's directory listed, the
// plugin's not. The message names the plugin directory only.
TEST(EfaLdLibraryPath, MessageNamesOnlyTheMissingDirectory) {
  std::string df = replace(
      kSeedShort, "ENV LD_LIBRARY_PATH=/opt/amazon/ofi-nccl/lib:", "ENV LD_LIBRARY_PATH=/usr/local/lib:");
  auto d = lint_dockerfile(SourceFile("Dockerfile", df), {});
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].rule_id, "efa-ld-library-path");
  EXPECT_EQ(
      d[0].message,
      "the image's final LD_LIBRARY_PATH ('/usr/local/lib:/opt/amazon/efa/lib:${LD_LIBRARY_PATH}') "
      "does not list /opt/amazon/ofi-nccl/lib (the installer's aws-ofi-nccl): the base's older copies can "
      "be loaded");
}

// Issue 25: a libfabric built into /usr/local on an NGC base, then
// /usr/local/lib listed before the installer's directories: two libfabrics,
// the file's own first.
TEST(EfaLdLibraryPath, FiresWhenADirTheFileFillsWithLibfabricComesFirst) {
  std::string df =
      replace(kSeedShort, kEnv, "") +
      "RUN cd /tmp/libfabric-2.1.0 && ./configure --prefix=/usr/local && make -j && make install\n"
      "ENV LD_LIBRARY_PATH=/usr/local/lib:/opt/amazon/efa/lib:/opt/amazon/ofi-nccl/lib:$LD_LIBRARY_PATH\n";
  EXPECT_THAT(hits(df, "efa-ld-library-path"), ElementsAre("12:21 error"));
  auto d = lint_dockerfile(SourceFile("Dockerfile", df), {});
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].message,
            "the image's final LD_LIBRARY_PATH "
            "('/usr/local/lib:/opt/amazon/efa/lib:/opt/amazon/ofi-nccl/lib:$LD_LIBRARY_PATH') searches "
            "/usr/local/lib before /opt/amazon/efa/lib: the libfabric this file installs into "
            "/usr/local/lib would be loaded instead of the installer's");
  ASSERT_EQ(d[0].related.size(), 1u);
  EXPECT_EQ(std::to_string(d[0].related[0].line) + ":" + std::to_string(d[0].related[0].column) + " " +
                d[0].related[0].message,
            "11:32 installs its own libfabric into /usr/local/lib");
  // The file's libfabric after the installer's libfabric (the plugin's
  // directory between them holds no libfabric): quiet.
  EXPECT_THAT(hits(replace(df, "/usr/local/lib:/opt/amazon/efa/lib:/opt/amazon/ofi-nccl/lib:",
                           "/opt/amazon/efa/lib:/usr/local/lib:/opt/amazon/ofi-nccl/lib:"),
                   "efa-ld-library-path"),
              IsEmpty());
  // The installer's directories first: quiet.
  EXPECT_THAT(hits(replace(df, "/usr/local/lib:/opt/amazon/efa/lib:/opt/amazon/ofi-nccl/lib:",
                           "/opt/amazon/ofi-nccl/lib:/opt/amazon/efa/lib:/usr/local/lib:"),
                   "efa-ld-library-path"),
              IsEmpty());
}

// An aws-ofi-nccl cloned and built with cmake into /opt/ofi (lib64), on a
// CUDA base: its plugin ahead of the installer's (1.50.0 lays one down).
TEST(EfaLdLibraryPath, FiresWhenTheFilesOwnNetPluginComesFirstOnACudaBase) {
  std::string df =
      replace(replace(kSeedShort, kEnv, ""), "nvcr.io/nvidia/pytorch:26.08-py3",
              "nvidia/cuda:12.4.1-devel-ubuntu22.04") +
      "RUN git clone -b v1.13.0 https://github.com/aws/aws-ofi-nccl.git /src/plugin && cd /src/plugin \\\n"
      " && mkdir build && cd build && cmake -DCMAKE_INSTALL_PREFIX=/opt/ofi .. && cmake --build . --target "
      "install\n"
      "ENV LD_LIBRARY_PATH=/opt/ofi/lib64:$LD_LIBRARY_PATH\n";
  EXPECT_THAT(hits(df, "efa-ld-library-path"), ElementsAre("13:21 error"));
  // Installer 1.41.0 lays down no plugin: the file's is the only one.
  EXPECT_THAT(hits(replace(df, "1.50.0", "1.41.0"), "efa-ld-library-path"), IsEmpty());
}

// A libfabric copied in by COPY, its directory first: the same conflict.
TEST(EfaLdLibraryPath, FiresWhenACopiedLibfabricsDirComesFirst) {
  std::string df =
      replace(kSeedShort, kEnv, "") + "COPY build/libfabric.so.1 build/libfabric.so /opt/fabric/\n" +
      "ENV LD_LIBRARY_PATH=/opt/fabric:/opt/amazon/ofi-nccl/lib:/opt/amazon/efa/lib:$LD_LIBRARY_PATH\n";
  EXPECT_THAT(hits(df, "efa-ld-library-path"), ElementsAre("12:21 error"));
}

// EFA_INSTALLER_VERSION=latest is laid out as the newest installer known
// (1.50.0): its plugin directory is asked for.
TEST(EfaLdLibraryPath, LatestIsLaidOutAsTheNewestKnownInstaller) {
  std::string df = replace(replace(kSeedShort, "1.50.0", "latest"), kEnv,
                           "ENV LD_LIBRARY_PATH=/opt/amazon/efa/lib:${LD_LIBRARY_PATH}\n");
  EXPECT_THAT(hits(df, "efa-ld-library-path"), ElementsAre("11:21 error"));
  auto d = lint_dockerfile(SourceFile("Dockerfile", df), {});
  for (const auto& x : d) {
    if (x.rule_id != "efa-ld-library-path") continue;
    EXPECT_NE(x.hint.find("/opt/amazon/ofi-nccl/lib:/opt/amazon/efa/lib"), std::string::npos) << x.hint;
  }
  EXPECT_THAT(hits(replace(kSeedShort, "1.50.0", "latest"), "efa-ld-library-path"), IsEmpty());
}

// Seen in public EFA images with EFA_INSTALLER_VERSION=latest on NGC: the
// file's own aws-ofi-nccl listed, the installer's plugin directory not. The
// message names the file's copy, the build is related.
TEST(EfaLdLibraryPath, MissingPluginDirNamesTheFilesOwnPlugin) {
  std::string df =
      replace(kSeedShort, kEnv, "") +
      "RUN git clone https://github.com/aws/aws-ofi-nccl.git /opt/aws-ofi-nccl && cd /opt/aws-ofi-nccl "
      "&& ./configure --prefix=/opt/aws-ofi-nccl/install && make && make install\n"
      "ENV LD_LIBRARY_PATH=/opt/amazon/efa/lib:/opt/aws-ofi-nccl/install/lib:$LD_LIBRARY_PATH\n";
  auto d = lint_dockerfile(SourceFile("Dockerfile", df), {});
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(std::to_string(d[0].line) + ":" + std::to_string(d[0].column), "12:21");
  EXPECT_EQ(
      d[0].message,
      "the image's final LD_LIBRARY_PATH "
      "('/opt/amazon/efa/lib:/opt/aws-ofi-nccl/install/lib:$LD_LIBRARY_PATH') "
      "does not list /opt/amazon/ofi-nccl/lib (the installer's aws-ofi-nccl): the NCCL net plugin this file "
      "installs into /opt/aws-ofi-nccl/install/lib would be loaded instead of the installer's");
  ASSERT_EQ(d[0].related.size(), 1u);
  EXPECT_EQ(d[0].related[0].line, 11);
}

// A file that deletes the base's EFA stack before the installer runs leaves no
// older copy to load: judged as a base without one (the installer's
// ld.so.conf.d entry finds its libraries); deleting only libfabric's leaves
// the base's plugin.
TEST(EfaLdLibraryPath, ABaseWhoseStackTheFileRemovesFirstIsJudgedAsABaseWithoutOne) {
  std::string no_env = replace(kSeedShort, kEnv, "");
  std::string removed = replace(no_env, "FROM nvcr.io/nvidia/pytorch:26.08-py3\n",
                                "FROM nvcr.io/nvidia/pytorch:26.08-py3\nRUN rm -rf /opt/amazon\n");
  ASSERT_NE(removed, no_env);
  EXPECT_THAT(hits(removed, "efa-ld-library-path"), IsEmpty());
  std::string contents = replace(no_env, "FROM nvcr.io/nvidia/pytorch:26.08-py3\n",
                                 "FROM nvcr.io/nvidia/pytorch:26.08-py3\nRUN rm -rf /opt/amazon/*\n");
  EXPECT_THAT(hits(contents, "efa-ld-library-path"), IsEmpty());
  std::string half = replace(no_env, "FROM nvcr.io/nvidia/pytorch:26.08-py3\n",
                             "FROM nvcr.io/nvidia/pytorch:26.08-py3\nRUN rm -rf /opt/amazon/efa\n");
  EXPECT_THAT(hits(half, "efa-ld-library-path"), ElementsAre("10:5 error"));
  // A shadowing directory first is still wrong without the base's stack.
  std::string shadow = removed + "ENV LD_LIBRARY_PATH=/usr/lib/x86_64-linux-gnu:$LD_LIBRARY_PATH\n";
  EXPECT_THAT(hits(shadow, "efa-ld-library-path"), ElementsAre("12:21 error"));
}

// Another nvcr.io/nvidia image (DCGM's) is not known to carry an EFA stack.
TEST(EfaLdLibraryPath, AnotherNgcImageIsJudgedAsABaseWithoutAStack) {
  std::string dcgm = replace(replace(kSeedShort, kEnv, ""), "nvcr.io/nvidia/pytorch:26.08-py3",
                             "nvcr.io/nvidia/cloud-native/dcgm:4.2.3-1-ubuntu22.04");
  EXPECT_THAT(hits(dcgm, "efa-ld-library-path"), IsEmpty());
  EXPECT_THAT(
      hits(dcgm + "ENV LD_LIBRARY_PATH=/usr/lib/x86_64-linux-gnu:$LD_LIBRARY_PATH\n", "efa-ld-library-path"),
      ElementsAre("11:21 error"));
}

TEST(EfaLdLibraryPath, QuietWithoutAnInstaller) {
  EXPECT_THAT(hits("FROM ubuntu:24.04\nENV LD_LIBRARY_PATH=/usr/lib\n", "efa-ld-library-path"), IsEmpty());
}

}  // namespace
}  // namespace trainimg::recipes::testing
