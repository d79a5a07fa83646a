// SPDX-License-Identifier: GPL-3.0-or-later
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "recipes/rules/test_util.h"

namespace trainimg::recipes::testing {
namespace {
using ::testing::ElementsAre;
using ::testing::IsEmpty;

TEST(HostLibraryMount, QuietOnTheSeed) { EXPECT_THAT(hits(kSeedShort, "host-library-mount"), IsEmpty()); }

TEST(HostLibraryMount, FiresForAHostMountRoot) {
  EXPECT_THAT(hits(kSeedShort + "ENV LD_LIBRARY_PATH=/opt/amazon/ofi-nccl/lib:/opt/amazon/efa/lib:/host/efa/lib:$LD_LIBRARY_PATH\n",
                   "host-library-mount"),
              ElementsAre("12:21 warning"));
}

TEST(HostLibraryMount, FiresForAVolumeDirectory) {
  EXPECT_THAT(hits(kSeedShort + "VOLUME [\"/efa-host\"]\nENV LD_LIBRARY_PATH=/opt/amazon/ofi-nccl/lib:/opt/amazon/efa/lib:/efa-host/lib\n",
                   "host-library-mount"),
              ElementsAre("13:21 warning"));
}

TEST(HostLibraryMount, QuietForADirectoryThatOnlyStartsLikeAMountRoot) {
  // /mntdata is not under /mnt; /opt/hostname-tools is not a mount root.
  EXPECT_THAT(hits(kSeedShort + "ENV LD_LIBRARY_PATH=/opt/amazon/ofi-nccl/lib:/opt/amazon/efa/lib:/mntdata/lib:/opt/hostname-tools/lib\n",
                   "host-library-mount"),
              IsEmpty());
}

}  // namespace
}  // namespace trainimg::recipes::testing
