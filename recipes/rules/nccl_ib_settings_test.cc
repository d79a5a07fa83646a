// SPDX-License-Identifier: GPL-3.0-or-later
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "recipes/rules/test_util.h"

namespace trainimg::recipes::testing {
namespace {
using ::testing::ElementsAre;
using ::testing::IsEmpty;

TEST(NcclIbSettings, ErrorForNcclNetIb) {
  EXPECT_THAT(hits(kSeedShort + "ENV NCCL_NET=IB\n", "nccl-ib-settings"), ElementsAre("12:14 error"));
}

TEST(NcclIbSettings, WarningForIbOnlyKnobs) {
  EXPECT_THAT(hits(kSeedShort + "ENV NCCL_DEBUG=INFO \\\n    NCCL_IB_HCA=mlx5\n", "nccl-ib-settings"),
              ElementsAre("13:5 warning"));
}

TEST(NcclIbSettings, QuietForNcclIbDisableAndOtherNets) {
  EXPECT_THAT(hits(kSeedShort + "ENV NCCL_IB_DISABLE=1 NCCL_NET=Libfabric NCCL_SOCKET_IFNAME=^lo\n",
                   "nccl-ib-settings"),
              IsEmpty());
}

// On a cloud without EFA the InfiniBand settings are right (issue 13).
TEST(NcclIbSettings, QuietWhereTheImageShowsNoEfa) {
  EXPECT_THAT(
      hits("FROM nvcr.io/nvidia/pytorch:26.08-py3\nENV NCCL_NET=IB NCCL_IB_HCA=mlx5\n", "nccl-ib-settings"),
      IsEmpty());
}

TEST(NcclIbSettings, FiresWhereFiProviderSaysEfa) {
  EXPECT_THAT(hits("FROM nvcr.io/nvidia/pytorch:26.08-py3\nENV FI_PROVIDER=efa\nENV NCCL_IB_HCA=mlx5\n",
                   "nccl-ib-settings"),
              ElementsAre("3:5 warning"));
}

TEST(NcclIbSettings, QuietWhenOnlyARunExportsIt) {
  // A RUN's export does not reach the image environment.
  EXPECT_THAT(hits(kSeedShort + "RUN export NCCL_NET=IB && true\n", "nccl-ib-settings"), IsEmpty());
}

}  // namespace
}  // namespace trainimg::recipes::testing
