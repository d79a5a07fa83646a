// SPDX-License-Identifier: GPL-3.0-or-later
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "recipes/recipe/test_support.h"

namespace trainimg::recipes {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;
using testing::checks_of;
using testing::kHead;

TEST(MpiSecondInstallCheck, FiresForOpenMpiAptPackagesOnNgc) {
  EXPECT_THAT(checks_of(std::string(kHead) + "apt: [curl, openmpi-bin, libopenmpi-dev=4.1.6-7, libopenmpi3t64]\n"),
              ElementsAre("3:13 error [mpi-second-install] apt package 'openmpi-bin' installs a second Open MPI on "
                          "an NGC base",
                          "3:26 error [mpi-second-install] apt package 'libopenmpi-dev=4.1.6-7' installs a second "
                          "Open MPI on an NGC base",
                          "3:50 error [mpi-second-install] apt package 'libopenmpi3t64' installs a second Open MPI "
                          "on an NGC base"));
}

TEST(MpiSecondInstallCheck, FiresForEnvPointingAtTheInstallersOpenMpi) {
  EXPECT_THAT(checks_of(std::string(kHead) +
                        "steps:\n  - name: s\n    env:\n"
                        "      PATH: /opt/amazon/openmpi/bin:${PATH}\n"
                        "      OPAL_PREFIX: /opt/amazon/openmpi5\n"),
              ElementsAre("6:13 error [mpi-second-install] step 's' points PATH at the EFA installer's "
                          "/opt/amazon/openmpi on an NGC base",
                          "7:20 error [mpi-second-install] step 's' points OPAL_PREFIX at the EFA installer's "
                          "/opt/amazon/openmpi on an NGC base"));
}

TEST(MpiSecondInstallCheck, QuietOffNgcAndForLookAlikes) {
  EXPECT_THAT(checks_of("base: ubuntu:24.04\nefa: {installer: 1.50.0}\napt: [openmpi-bin]\n"), IsEmpty());
  EXPECT_THAT(checks_of(std::string(kHead) +
                        "apt: [mpich, openmpi-doc]\n"  // another MPI, and Open MPI's documentation only
                        "steps:\n  - name: s\n    env: {PATH: '/opt/amazon/openmpi-tools/bin:${PATH}', "
                        "NOTE: /opt/amazon/openmpi}\n"),
              IsEmpty());
}

}  // namespace
}  // namespace trainimg::recipes
