// SPDX-License-Identifier: GPL-3.0-or-later
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "recipes/recipe/test_support.h"

namespace trainimg::recipes {
namespace {

using testing::checks_of;
using ::testing::ElementsAre;
using ::testing::IsEmpty;
using testing::kHead;

TEST(NcclIbSettingsCheck, NcclNetIbIsAnError) {
  EXPECT_THAT(
      checks_of(std::string(kHead) + "steps:\n  - name: s\n    env: {NCCL_NET: ib}\n"),
      ElementsAre("5:21 error [nccl-ib-settings] step 's' sets NCCL_NET=ib; NCCL would use InfiniBand, not "
                  "EFA"));
}

TEST(NcclIbSettingsCheck, OtherIbKnobsAreWarningsOnTheKey) {
  EXPECT_THAT(checks_of(std::string(kHead) + "steps:\n  - name: s\n    env:\n      NCCL_IB_HCA: mlx5_0\n"),
              ElementsAre("6:7 warning [nccl-ib-settings] step 's' sets NCCL_IB_HCA, an InfiniBand-only NCCL "
                          "setting"));
}

TEST(NcclIbSettingsCheck, QuietForOtherNetworksAndIbDisable) {
  EXPECT_THAT(
      checks_of(
          std::string(kHead) +
          "steps:\n  - name: s\n    env: {NCCL_NET: Libfabric, NCCL_IB_DISABLE: '1', NCCL_DEBUG: INFO}\n"),
      IsEmpty());
}

}  // namespace
}  // namespace trainimg::recipes
