// SPDX-License-Identifier: GPL-3.0-or-later
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "common/error.h"
#include "inspect/host/parsers.h"
#include "inspect/host/test_support.h"

namespace trainimg::host {
namespace {
using ::testing::Contains;
using testing::error_of;
using ::testing::Not;
using testing::read_fixture;

TEST(LsmodOnSeedFixture, ListsModulesWithoutTheHeader) {
  auto m = parse_lsmod(read_fixture("p6-b200/lsmod.txt"));
  EXPECT_THAT(m, Contains("gdrdrv"));
  EXPECT_THAT(m, Contains("nvidia_fs"));
  EXPECT_THAT(m, Not(Contains("Module")));
  EXPECT_THAT(parse_lsmod(read_fixture("variants/no-gdrdrv/lsmod.txt")), Not(Contains("gdrdrv")));
}

TEST(LsCharDeviceOnSeedFixture, SeesTheDeviceNode) {
  EXPECT_TRUE(parse_ls_char_device(read_fixture("p6-b200/dev-gdrdrv.txt")));
  EXPECT_FALSE(parse_ls_char_device("-rw-r--r-- 1 root root 0 Oct  2 00:00 /dev/gdrdrv\n"));
}

TEST(Ulimit, ReadsUnlimitedOrKiB) {
  EXPECT_EQ(parse_ulimit("unlimited\r\n", "u"), "unlimited");
  EXPECT_EQ(parse_ulimit("8192\n", "u"), "8192");
  EXPECT_EQ(error_of([] { parse_ulimit("8.192\n", "ulimit-l.txt"); }),
            "ulimit-l.txt:1:1: `ulimit -l` printed \"8.192\", neither \"unlimited\" nor a number");
  EXPECT_EQ(error_of([] { parse_ulimit("", "ulimit-l.txt"); }), "ulimit-l.txt:1:1: `ulimit -l` printed nothing");
}

// bash's `ulimit -a` names the limit: "max locked memory (kbytes, -l) 8192".
TEST(Ulimit, ReadsTheMemlockLineOfUlimitA) {
  EXPECT_EQ(parse_ulimit("core file size              (blocks, -c) 0\n"
                         "max locked memory           (kbytes, -l) unlimited\n"
                         "max memory size             (kbytes, -m) unlimited\n",
                         "u"),
            "unlimited");
  EXPECT_EQ(parse_ulimit("max locked memory       (kbytes, -l) 65536\n", "u"), "65536");
}

TEST(DfOnSeedFixture, ReadsTheMountAndSize) {
  auto r = parse_df(read_fixture("p6-b200/df-nvme.txt"), "df");
  EXPECT_EQ(r.mounted_on, "/opt/dlami/nvme");
  EXPECT_EQ(r.size, "28T");
  EXPECT_EQ(parse_df(read_fixture("variants/crlf/df-nvme.txt"), "df").mounted_on, "/opt/dlami/nvme");
  EXPECT_EQ(parse_df(read_fixture("variants/nvme-unmounted/df-nvme.txt"), "df").mounted_on, "/");
}

TEST(DfOnSeedFixture, JoinsAWrappedDeviceName) {
  auto r = parse_df(read_fixture("variants/df-wrapped/df-nvme.txt"), "df");
  EXPECT_EQ(r.filesystem, "/dev/mapper/a-very-long-volume-group-name-lv_ephemeral");
  EXPECT_EQ(r.mounted_on, "/opt/dlami/nvme");
}

TEST(DfOnSeedFixture, RefusesATruncatedRow) {
  EXPECT_EQ(error_of([] { parse_df(read_fixture("variants/df-truncated/df-nvme.txt"), "df-nvme.txt"); }),
            "df-nvme.txt:2:1: `df` row has 3 fields, expected 6 (truncated?)");
}

TEST(ShowholdOnSeedFixture, KernelHeldOnlyWithKernelPackages) {
  EXPECT_TRUE(kernel_is_held(parse_showhold(read_fixture("p6-b200/apt-mark-showhold.txt"))));
  EXPECT_FALSE(kernel_is_held(parse_showhold("nvidia-driver-595\ndocker-ce\n")));
  EXPECT_FALSE(kernel_is_held(parse_showhold("")));
}

TEST(LfsOnSeedFixture, ReadsTheVersion) {
  EXPECT_EQ(parse_lfs_version(read_fixture("p6-b200/lfs-version.txt")), "2.15.6");
  EXPECT_EQ(parse_lfs_version("lfs: command not found\n"), std::nullopt);
}

TEST(FirstLine, TrimsCrlfAndSkipsBlankLines) {
  EXPECT_EQ(first_line("\r\n  active\r\n"), "active");
  EXPECT_EQ(first_line(""), std::nullopt);
}

}  // namespace
}  // namespace trainimg::host
