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
         "RUN apt-get update && ./efa_installer.sh " +
         flags + "\n";
}

TEST(EfaContainerFlags, QuietOnTheSeedFlags) {
  EXPECT_THAT(hits(kSeedShort, "efa-container-flags"), IsEmpty());
}

TEST(EfaContainerFlags, ShortSpellingsAndClustersCount) {
  EXPECT_THAT(hits(with_flags("-y -g -k -l -n"), "efa-container-flags"), IsEmpty());
  EXPECT_THAT(hits(with_flags("-ygkln"), "efa-container-flags"), IsEmpty());
  EXPECT_THAT(hits(with_flags("--yes --enable-gdr --skip-k --skip-l --no-v"), "efa-container-flags"),
              IsEmpty());
}

TEST(EfaContainerFlags, FiresForMissingSkipKmodAndNoVerify) {
  std::string df = with_flags("-y -g --skip-limit-conf");
  EXPECT_THAT(hits(df, "efa-container-flags"), ElementsAre("2:23 error"));
  auto d = lint_dockerfile(SourceFile("Dockerfile", df), {});
  EXPECT_EQ(d[0].message, "efa_installer.sh lacks the container flag(s) --skip-kmod, --no-verify");
}

// -g is the GPUDirect path between GPUs (seed 002, Pitfall 2): asked for
// where the image shows a GPU stack (a CUDA base here).
TEST(EfaContainerFlags, WarnsForMissingGOnACudaBase) {
  std::string df = replace(with_flags("-y --skip-kmod --skip-limit-conf --no-verify"), "ubuntu:24.04",
                           "nvidia/cuda:12.4.1-devel-ubuntu22.04");
  EXPECT_THAT(hits(df, "efa-container-flags"), ElementsAre("2:23 warning"));
}

// Issue 25: a CPU-only MPI image (OSU micro-benchmarks, no CUDA) has no GPU
// for GPUDirect: no -g asked.
TEST(EfaContainerFlags, QuietForMissingGOnACpuOnlyMpiImage) {
  std::string df =
      "FROM ubuntu:20.04\n"
      "RUN apt-get update && ./efa_installer.sh -y --skip-kmod --skip-limit-conf --no-verify\n"
      "RUN curl -O https://mvapich.cse.ohio-state.edu/download/mvapich/osu-micro-benchmarks-7.4.tar.gz \\\n"
      " && tar xf osu-micro-benchmarks-7.4.tar.gz && cd osu-micro-benchmarks-7.4 \\\n"
      " && ./configure CC=/opt/amazon/openmpi/bin/mpicc && make install\n";
  EXPECT_THAT(hits(df, "efa-container-flags"), IsEmpty());
}

// The same base, but the file builds nccl-tests: the image has a GPU stack.
TEST(EfaContainerFlags, WarnsForMissingGWhereTheFileBuildsNccl) {
  std::string df =
      "FROM ubuntu:20.04\n"
      "RUN apt-get update && ./efa_installer.sh -y --skip-kmod --skip-limit-conf --no-verify\n"
      "RUN git clone https://github.com/NVIDIA/nccl-tests.git /opt/nccl-tests\n";
  EXPECT_THAT(hits(df, "efa-container-flags"), ElementsAre("2:23 warning"));
  EXPECT_THAT(hits(replace(df, "git clone https://github.com/NVIDIA/nccl-tests.git /opt/nccl-tests",
                           "apt-get install -y libnccl2"),
                   "efa-container-flags"),
              ElementsAre("2:23 warning"));
}

TEST(EfaContainerFlags, FlagInsideAnEchoStringDoesNotCount) {
  std::string df =
      "FROM ubuntu:24.04\n"
      "RUN apt-get update && echo \"--skip-kmod --skip-limit-conf --no-verify\" && ./efa_installer.sh -y "
      "-g\n";
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
  EXPECT_THAT(hits("FROM nvidia/cuda:12.4.1-devel-ubuntu22.04\nRUN apt-get update && sudo -E bash "
                   "efa_installer.sh -y\n",
                   "efa-container-flags"),
              ElementsAre("2:36 warning", "2:36 error"));
}

}  // namespace
}  // namespace trainimg::recipes::testing
