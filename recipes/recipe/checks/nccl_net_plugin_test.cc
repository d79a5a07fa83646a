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

TEST(NcclNetPluginCheck, FiresWhenAStepChangesThePlugin) {
  EXPECT_THAT(
      checks_of(std::string(kHead) +
                "steps:\n  - name: s\n    env:\n      NCCL_NET_PLUGIN: libnccl-net.so\n"),
      ElementsAre("6:24 error [nccl-net-plugin] step 's' sets NCCL_NET_PLUGIN=libnccl-net.so; NCCL would "
                  "not load the EFA plugin"));
}

TEST(NcclNetPluginCheck, FiresWhenAStepEmptiesThePlugin) {
  EXPECT_THAT(
      checks_of(std::string(kHead) + "steps:\n  - name: s\n    env: {NCCL_NET_PLUGIN: ''}\n"),
      ElementsAre("5:28 error [nccl-net-plugin] step 's' empties NCCL_NET_PLUGIN; NCCL would not load the "
                  "EFA plugin"));
  EXPECT_THAT(
      checks_of(std::string(kHead) + "steps:\n  - name: s\n    env:\n      NCCL_NET_PLUGIN:\n"),
      ElementsAre("6:7 error [nccl-net-plugin] step 's' empties NCCL_NET_PLUGIN; NCCL would not load the "
                  "EFA plugin"));
}

TEST(NcclNetPluginCheck, QuietWhenItStaysOfi) {
  EXPECT_THAT(checks_of(std::string(kHead) +
                        "steps:\n  - name: s\n    env: {NCCL_NET_PLUGIN: ofi, NCCL_TUNER_PLUGIN: ofi}\n"),
              IsEmpty());
}

}  // namespace
}  // namespace trainimg::recipes
