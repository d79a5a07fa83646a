// SPDX-License-Identifier: GPL-3.0-or-later
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "recipes/rules/test_util.h"

namespace trainimg::recipes::testing {
namespace {
using ::testing::ElementsAre;
using ::testing::IsEmpty;

TEST(MpiSecondInstall, QuietOnTheSeed) {
  EXPECT_THAT(hits(kSeedShort, "mpi-second-install"), IsEmpty());
}

TEST(MpiSecondInstall, FiresForAptOpenMpi) {
  EXPECT_THAT(hits(kSeedShort + "RUN apt-get update && apt-get install -y libopenmpi-dev=4.1.6-7 git\n",
                   "mpi-second-install"),
              ElementsAre("12:42 error"));
}

// Debian's default-MPI metapackage is Open MPI on Debian and Ubuntu; build
// search paths pointing at the installer's Open MPI build against it.
TEST(MpiSecondInstall, FiresForTheDefaultMpiMetapackageAndBuildSearchPaths) {
  EXPECT_THAT(
      hits(kSeedShort + "RUN apt-get update && apt-get install -y mpi-default-dev\n", "mpi-second-install"),
      ElementsAre("12:42 error"));
  EXPECT_THAT(
      hits(kSeedShort + "ENV PKG_CONFIG_PATH=/opt/amazon/openmpi/lib/pkgconfig\n", "mpi-second-install"),
      ElementsAre("12:21 error"));
  EXPECT_THAT(
      hits(kSeedShort + "ENV CMAKE_PREFIX_PATH=/usr/local:/opt/amazon/openmpi5\n", "mpi-second-install"),
      ElementsAre("12:23 error"));
}

TEST(MpiSecondInstall, QuietForAPackageThatOnlyMentionsMpi) {
  EXPECT_THAT(hits(kSeedShort + "RUN apt-get install -y python3-mpi4py-doc && echo openmpi-bin\n",
                   "mpi-second-install"),
              IsEmpty());
}

TEST(MpiSecondInstall, FiresForASourceBuild) {
  EXPECT_THAT(
      hits(kSeedShort +
               "RUN curl -fsSLO https://download.open-mpi.org/release/open-mpi/v4.1/openmpi-4.1.6.tar.bz2\n",
           "mpi-second-install"),
      ElementsAre("12:17 error"));
}

// One root cause, one finding: the other places are related locations.
TEST(MpiSecondInstall, FiresOnceForPathAndOpalPrefixOnInstallerMpi) {
  std::string df = kSeedShort + "ENV PATH=/opt/amazon/openmpi/bin:$PATH OPAL_PREFIX=/opt/amazon/openmpi\n";
  EXPECT_THAT(hits(df, "mpi-second-install"), ElementsAre("12:10 error"));
  auto d = lint_dockerfile(SourceFile("Dockerfile", df), {});
  ASSERT_EQ(d.size(), 1u);
  ASSERT_EQ(d[0].related.size(), 1u);
  EXPECT_EQ(d[0].related[0].line, 12);
  EXPECT_EQ(d[0].related[0].column, 52);
}

// A later ENV that only carries the value an earlier one gave (`$PATH` after
// `ENV PATH=/opt/amazon/openmpi/bin:$PATH`) does not point at it again; one
// that names it again does.
TEST(MpiSecondInstall, AnEnvThatOnlyCarriesTheEarlierValueIsNotAPlace) {
  std::string df = kSeedShort + "ENV PATH=/opt/amazon/openmpi/bin:$PATH\n" +
                   "ENV PATH=/opt/gdrcopy/bin:$PATH LD_LIBRARY_PATH=/opt/gdrcopy/lib:$LD_LIBRARY_PATH\n" +
                   "ENV PATH=$PATH:/opt/amazon/openmpi/bin\n";
  EXPECT_THAT(hits(df, "mpi-second-install"), ElementsAre("12:10 error"));
  auto d = lint_dockerfile(SourceFile("Dockerfile", df), {});
  ASSERT_EQ(d.size(), 1u);
  ASSERT_EQ(d[0].related.size(), 1u);
  EXPECT_EQ(d[0].related[0].line, 14);
}

TEST(MpiSecondInstall, DownloadUnpackBuildAndRmOfOneTarballIsOneFinding) {
  std::string df = kSeedShort +
                   "RUN wget https://download.open-mpi.org/release/open-mpi/v4.1/openmpi-4.1.6.tar.gz \\\n"
                   " && tar xf openmpi-4.1.6.tar.gz && cd openmpi-4.1.6 && ./configure && make install \\\n"
                   " && rm openmpi-4.1.6.tar.gz\n";
  EXPECT_THAT(hits(df, "mpi-second-install"), ElementsAre("12:10 error"));
  auto d = lint_dockerfile(SourceFile("Dockerfile", df), {});
  ASSERT_EQ(d.size(), 1u);
  ASSERT_EQ(d[0].related.size(), 2u);
  EXPECT_EQ(std::to_string(d[0].related[0].line) + ":" + std::to_string(d[0].related[0].column), "13:12");
  EXPECT_EQ(std::to_string(d[0].related[1].line) + ":" + std::to_string(d[0].related[1].column), "14:8");
}

// NGC's Open MPI deleted, then the installer's wired in: one warning at the deletion.
TEST(MpiSecondInstall, ReplacePatternIsOneWarningAtTheRemoval) {
  std::string df = kSeedShort + "RUN rm -rf /opt/hpcx/ompi /usr/local/mpi\n" +
                   "ENV PATH=/opt/amazon/openmpi/bin:$PATH\nENV OPAL_PREFIX=/opt/amazon/openmpi\n";
  EXPECT_THAT(hits(df, "mpi-second-install"), ElementsAre("12:27 warning"));
  auto d = lint_dockerfile(SourceFile("Dockerfile", df), {});
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].related.size(), 2u);
  EXPECT_NE(d[0].message.find("replaces the base's Open MPI (/usr/local/mpi"), std::string::npos)
      << d[0].message;
  // Issue 25: it ends with what to do, not with a statement.
  const std::string end = "keep it, or make sure nothing of the base still expects the removed one";
  EXPECT_EQ(d[0].message.substr(d[0].message.size() - std::min(end.size(), d[0].message.size())), end);
}

TEST(MpiSecondInstall, FiresForTheInstallerMpiInLdSoConfD) {
  EXPECT_THAT(
      hits(kSeedShort + "RUN echo /opt/amazon/openmpi/lib > /etc/ld.so.conf.d/openmpi.conf && ldconfig\n",
           "mpi-second-install"),
      ElementsAre("12:10 error"));
}

TEST(MpiSecondInstall, QuietForAnEchoThatIsNotLoaderConfig) {
  EXPECT_THAT(hits(kSeedShort + "RUN echo /opt/amazon/openmpi/lib > /tmp/notes.txt\n", "mpi-second-install"),
              IsEmpty());
}

TEST(MpiSecondInstall, FiresForWithMpiOnTheNemoImage) {
  std::string df = replace(kSeedShort, "nvcr.io/nvidia/pytorch:26.08-py3", "nvcr.io/nvidia/nemo:25.07");
  EXPECT_THAT(hits(df + "RUN ./configure --with-mpi=/opt/amazon/openmpi\n", "mpi-second-install"),
              ElementsAre("12:17 error"));
}

// nvcr.io/nvidia/cuda carries no MPI: the only Open MPI there is not a second one.
TEST(MpiSecondInstall, QuietOnTheNgcCudaImage) {
  EXPECT_THAT(hits("FROM nvcr.io/nvidia/cuda:12.4.1-devel-ubuntu22.04\n"
                   "RUN apt-get update && apt-get install -y libopenmpi-dev\n"
                   "ENV PATH=/opt/amazon/openmpi/bin:$PATH\n",
                   "mpi-second-install"),
              IsEmpty());
}

TEST(MpiSecondInstall, HpcImagesNameHpcx) {
  auto d = lint_dockerfile(SourceFile("Dockerfile",
                                      "FROM nvcr.io/nvidia/hpc-benchmarks:24.09\n"
                                      "ENV OPAL_PREFIX=/opt/amazon/openmpi\n"),
                           {});
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].line, 2);
  EXPECT_EQ(d[0].column, 17);
  EXPECT_NE(d[0].message.find("/opt/hpcx/ompi"), std::string::npos) << d[0].message;
}

// Public EFA images on cuda-dl-base (aws-do-eks nccl-tests Dockerfile.public,
// awsome-inference dynamo Dockerfile.efa) say it ships HPC-X at /opt/hpcx and
// hit the mix-up seed 002 warns of; a distribution Open MPI there is another.
TEST(MpiSecondInstall, CudaDlBaseCarriesHpcx) {
  auto d = lint_dockerfile(SourceFile("Dockerfile",
                                      "FROM nvcr.io/nvidia/cuda-dl-base:25.06-cuda12.9-devel-ubuntu24.04\n"
                                      "RUN apt-get update && apt-get install -y openmpi-bin\n"),
                           {});
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].rule_id, "mpi-second-install");
  EXPECT_EQ(d[0].line, 2);
  EXPECT_EQ(d[0].column, 42);
  EXPECT_NE(d[0].message.find("/opt/hpcx/ompi"), std::string::npos) << d[0].message;
  EXPECT_THAT(hits("FROM nvcr.io/nvidia/cuda-dl-base:25.06-cuda12.9-devel-ubuntu24.04\n"
                   "RUN make MPI=1 MPI_HOME=/opt/hpcx/ompi\n",
                   "mpi-second-install"),
              IsEmpty());
}

// Building against the base's own HPC-X Open MPI is not a second one.
TEST(MpiSecondInstall, QuietForTheBasesOwnHpcx) {
  EXPECT_THAT(hits("FROM nvcr.io/nvidia/hpc-benchmarks:24.09\n"
                   "RUN ./configure --with-mpi=/opt/hpcx/ompi/ --with-libfabric=/opt/amazon/efa\n",
                   "mpi-second-install"),
              IsEmpty());
}

TEST(MpiSecondInstall, NgcBaseOptionDeclaresAPrivateMirror) {
  std::string df = "FROM registry.example.com/ml/pytorch-ngc:26.08\nENV OPAL_PREFIX=/opt/amazon/openmpi\n";
  EXPECT_THAT(hits(df, "mpi-second-install"), IsEmpty());
  LintOptions opt;
  opt.ngc_bases.push_back("registry.example.com/ml/");
  EXPECT_THAT(hits(df, "mpi-second-install", opt), ElementsAre("2:17 error"));
}

TEST(MpiSecondInstall, FiresForMpiccFromTheInstaller) {
  EXPECT_THAT(hits(kSeedShort + "RUN /opt/amazon/openmpi/bin/mpicc -o hello hello.c\n", "mpi-second-install"),
              ElementsAre("12:5 error"));
}

TEST(MpiSecondInstall, FiresForBuildingAgainstIt) {
  EXPECT_THAT(
      hits(kSeedShort + "RUN MPI_HOME=/opt/amazon/openmpi pip install mpi4py\n", "mpi-second-install"),
      ElementsAre("12:5 error"));
}

TEST(MpiSecondInstall, QuietForRemovingTheInstallerMpi) {
  EXPECT_THAT(
      hits(kSeedShort + "RUN rm -rf /opt/amazon/openmpi /opt/amazon/openmpi5\n", "mpi-second-install"),
      IsEmpty());
}

TEST(MpiSecondInstall, QuietOnANonNgcBase) {
  EXPECT_THAT(hits("FROM ubuntu:24.04\nRUN apt-get install -y openmpi-bin\n", "mpi-second-install"),
              IsEmpty());
}

}  // namespace
}  // namespace trainimg::recipes::testing
