// SPDX-License-Identifier: GPL-3.0-or-later
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "recipes/recipe/test_support.h"

namespace trainimg::recipes {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;
using testing::checks_of;

std::string with_flags(const std::string& base, const std::string& flags) {
  return "base: " + base + "\nefa:\n  installer: 1.50.0\n  flags: " + flags + "\n";
}
const std::string kNgc = "nvcr.io/nvidia/pytorch:26.08-py3";

TEST(InstallerFlagsCheck, UnknownFlagIsAnError) {
  EXPECT_THAT(checks_of(with_flags(kNgc, "[--skip-kmods]")),
              ElementsAre("4:11 error [efa-container-flags] '--skip-kmods' is not an efa_installer.sh option"));
}

TEST(InstallerFlagsCheck, FlagsThatUndoAContainerInstallAreErrors) {
  EXPECT_THAT(checks_of(with_flags(kNgc, "[-u, --minimal]")),
              ElementsAre("4:11 error [efa-container-flags] '-u' contradicts a container install of the EFA stack",
                          "4:15 error [efa-container-flags] '--minimal' contradicts a container install of the EFA "
                          "stack"));
}

TEST(InstallerFlagsCheck, MpiNeedsAKnownFlavour) {
  EXPECT_THAT(checks_of(with_flags(kNgc, "[--mpi=mpich]")),
              ElementsAre("4:11 error [efa-container-flags] --mpi takes openmpi4 or openmpi5, not 'mpich'"));
  EXPECT_THAT(checks_of(with_flags(kNgc, "[--mpi]")),
              ElementsAre("4:11 error [efa-container-flags] '--mpi' is not an efa_installer.sh option"));
}

TEST(InstallerFlagsCheck, DisableNgcWarnsOnlyOnAnNgcBase) {
  EXPECT_THAT(checks_of(with_flags(kNgc, "[--disable-ngc]")),
              ElementsAre("4:11 warning [efa-disable-ngc] --disable-ngc on an NGC base: the installer would skip the "
                          "NGC-specific aws-ofi-nccl package"));
  EXPECT_THAT(checks_of(with_flags("ubuntu:24.04", "[--disable-ngc]")), IsEmpty());
}

TEST(InstallerFlagsCheck, ContainerFlagsGivenAgainAreRedundant) {
  EXPECT_THAT(checks_of(with_flags(kNgc, "[--skip-kmod]")),
              ElementsAre("4:11 warning [recipe-schema] '--skip-kmod' is already in the container flags; it is not "
                          "repeated"));
}

TEST(InstallerFlagsCheck, RealOptionsPass) {
  EXPECT_THAT(checks_of(with_flags(kNgc, "[--skip-mpi, --mpi=openmpi5, -d, --skip-rdma-core, --enable-ngc]")),
              IsEmpty());
}

}  // namespace
}  // namespace trainimg::recipes
