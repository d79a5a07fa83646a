// SPDX-License-Identifier: GPL-3.0-or-later
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "recipes/rules/test_util.h"

namespace trainimg::recipes::testing {
namespace {
using ::testing::ElementsAre;
using ::testing::IsEmpty;

TEST(MpiSecondInstall, QuietOnTheSeed) { EXPECT_THAT(hits(kSeedShort, "mpi-second-install"), IsEmpty()); }

TEST(MpiSecondInstall, FiresForAptOpenMpi) {
  EXPECT_THAT(hits(kSeedShort + "RUN apt-get update && apt-get install -y libopenmpi-dev=4.1.6-7 git\n", "mpi-second-install"),
              ElementsAre("12:42 error"));
}

TEST(MpiSecondInstall, QuietForAPackageThatOnlyMentionsMpi) {
  EXPECT_THAT(hits(kSeedShort + "RUN apt-get install -y python3-mpi4py-doc && echo openmpi-bin\n", "mpi-second-install"),
              IsEmpty());
}

TEST(MpiSecondInstall, FiresForASourceBuild) {
  EXPECT_THAT(hits(kSeedShort +
                       "RUN curl -fsSLO https://download.open-mpi.org/release/open-mpi/v4.1/openmpi-4.1.6.tar.bz2\n",
                   "mpi-second-install"),
              ElementsAre("12:17 error"));
}

TEST(MpiSecondInstall, FiresForPathAndOpalPrefixOnInstallerMpi) {
  EXPECT_THAT(hits(kSeedShort + "ENV PATH=/opt/amazon/openmpi/bin:$PATH OPAL_PREFIX=/opt/amazon/openmpi\n",
                   "mpi-second-install"),
              ElementsAre("12:10 error", "12:52 error"));
}

TEST(MpiSecondInstall, FiresForMpiccFromTheInstaller) {
  EXPECT_THAT(hits(kSeedShort + "RUN /opt/amazon/openmpi/bin/mpicc -o hello hello.c\n", "mpi-second-install"),
              ElementsAre("12:5 error"));
}

TEST(MpiSecondInstall, FiresForBuildingAgainstIt) {
  EXPECT_THAT(hits(kSeedShort + "RUN MPI_HOME=/opt/amazon/openmpi pip install mpi4py\n", "mpi-second-install"),
              ElementsAre("12:5 error"));
}

TEST(MpiSecondInstall, QuietForRemovingTheInstallerMpi) {
  EXPECT_THAT(hits(kSeedShort + "RUN rm -rf /opt/amazon/openmpi /opt/amazon/openmpi5\n", "mpi-second-install"), IsEmpty());
}

TEST(MpiSecondInstall, QuietOnANonNgcBase) {
  EXPECT_THAT(hits("FROM ubuntu:24.04\nRUN apt-get install -y openmpi-bin\n", "mpi-second-install"), IsEmpty());
}

}  // namespace
}  // namespace trainimg::recipes::testing
