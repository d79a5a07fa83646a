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

std::string with_ld(const std::string& value) {
  return std::string(kHead) + "steps:\n  - name: s\n    env:\n      LD_LIBRARY_PATH: " + value + "\n";
}

TEST(LdLibraryPathCheck, FiresWhenOtherPathsComeFirst) {
  EXPECT_THAT(checks_of(with_ld("/usr/local/lib:/opt/amazon/ofi-nccl/lib:/opt/amazon/efa/lib:${LD_LIBRARY_PATH}")),
              ElementsAre("6:24 error [efa-ld-library-path] step 's' sets LD_LIBRARY_PATH without "
                          "/opt/amazon/ofi-nccl/lib:/opt/amazon/efa/lib first"));
}

TEST(LdLibraryPathCheck, FiresWhenTheOrderIsSwapped) {
  EXPECT_THAT(checks_of(with_ld("/opt/amazon/efa/lib:/opt/amazon/ofi-nccl/lib:${LD_LIBRARY_PATH}")),
              ElementsAre("6:24 error [efa-ld-library-path] step 's' sets LD_LIBRARY_PATH without "
                          "/opt/amazon/ofi-nccl/lib:/opt/amazon/efa/lib first"));
}

TEST(LdLibraryPathCheck, WarnsWhenTheInheritedPathIsDropped) {
  EXPECT_THAT(checks_of(with_ld("/opt/amazon/ofi-nccl/lib:/opt/amazon/efa/lib:/usr/local/lib")),
              ElementsAre("6:24 warning [efa-ld-library-path] step 's' sets LD_LIBRARY_PATH without "
                          "${LD_LIBRARY_PATH}; the base image's library paths are dropped"));
}

TEST(LdLibraryPathCheck, QuietWhenExtraPathsComeAfterTheEfaOnes) {
  EXPECT_THAT(checks_of(with_ld("/opt/amazon/ofi-nccl/lib:/opt/amazon/efa/lib:/usr/local/lib:${LD_LIBRARY_PATH}")),
              IsEmpty());
  // A prefix that only looks alike is not the EFA directory.
  EXPECT_THAT(checks_of(with_ld("/opt/amazon/ofi-nccl/lib:/opt/amazon/efa/lib64:$LD_LIBRARY_PATH")).size(), 1u);
}

}  // namespace
}  // namespace trainimg::recipes
