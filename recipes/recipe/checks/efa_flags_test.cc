// SPDX-License-Identifier: GPL-3.0-or-later
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "recipes/recipe/test_support.h"

namespace trainimg::recipes {
namespace {

using testing::checks_of;
using ::testing::ElementsAre;
using ::testing::IsEmpty;

std::string with_flags(const std::string& flags) {
  return "base: nvcr.io/nvidia/pytorch:26.08-py3\nefa:\n  installer: 1.50.0\n  flags: " + flags + "\n";
}

TEST(RecipeEfaFlags, UnknownFlagIsAnError) {
  EXPECT_THAT(checks_of(with_flags("[--skip-kmods]")),
              ElementsAre("4:11 error [recipe-efa-flags] '--skip-kmods' is not an efa_installer.sh option"));
}

TEST(RecipeEfaFlags, FlagsThatUndoAContainerInstallAreErrors) {
  EXPECT_THAT(
      checks_of(with_flags("[-u, --minimal]")),
      ElementsAre("4:11 error [recipe-efa-flags] '-u' contradicts a container install of the EFA stack",
                  "4:15 error [recipe-efa-flags] '--minimal' contradicts a container install of the EFA "
                  "stack"));
}

TEST(RecipeEfaFlags, MpiNeedsAKnownFlavour) {
  EXPECT_THAT(checks_of(with_flags("[--mpi=mpich]")),
              ElementsAre("4:11 error [recipe-efa-flags] --mpi takes openmpi4 or openmpi5, not 'mpich'"));
  EXPECT_THAT(checks_of(with_flags("[--mpi]")),
              ElementsAre("4:11 error [recipe-efa-flags] '--mpi' is not an efa_installer.sh option"));
}

TEST(RecipeEfaFlags, ContainerFlagsGivenAgainAreRedundant) {
  EXPECT_THAT(
      checks_of(with_flags("[--skip-kmod, -n]")),
      ElementsAre("4:11 warning [recipe-efa-flags] '--skip-kmod' is already in the container flags; it is "
                  "not repeated",
                  "4:24 warning [recipe-efa-flags] '-n' is already in the container flags; it is not "
                  "repeated"));
}

TEST(RecipeEfaFlags, RealOptionsPass) {
  // --disable-ngc is a real option; on an NGC base efa-disable-ngc judges it
  // on the rendered installer line (lint_recipe_test.cc).
  EXPECT_THAT(checks_of(with_flags(
                  "[--skip-mpi, --mpi=openmpi5, -d, --skip-rdma-core, --enable-ngc, --disable-ngc]")),
              IsEmpty());
}

}  // namespace
}  // namespace trainimg::recipes
