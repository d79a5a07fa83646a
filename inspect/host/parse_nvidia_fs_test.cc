// SPDX-License-Identifier: GPL-3.0-or-later
#include <gtest/gtest.h>

#include "common/error.h"
#include "inspect/host/parsers.h"
#include "inspect/host/test_support.h"

namespace trainimg::host {
namespace {
using testing::error_of;
using testing::read_fixture;

TEST(NvfsStatsOnSeedFixture, ReadsVersionsAndCounters) {
  auto s = parse_nvfs_stats(read_fixture("gds/stats-before.txt"), "s");
  EXPECT_EQ(s.driver_version, "2.30.2");
  EXPECT_EQ(s.gds_version, "1.19.1.25");
  EXPECT_EQ(s.counters.at("Mmap").fields.at("n"), 4);
  EXPECT_EQ(s.counters.at("Bar1-map").fields.at("free"), 4);
  EXPECT_EQ(s.counters.at("Sparse Reads").fields.at("n"), 0);
  EXPECT_EQ(s.counters.at("Sparse Reads").line, 11);
  EXPECT_EQ(parse_nvfs_stats(read_fixture("gds/stats-after-gds.txt"), "s").counters.at("Sparse Reads").fields.at("n"),
            10240);
}

TEST(NvfsStats, AcceptsSpacedSeparatorsAndCrlf) {
  auto s = parse_nvfs_stats("NVFS Driver(version: 2.24.2)\r\nMmap : n=1 ok=1 err=0 munmap=1\r\n", "s");
  EXPECT_EQ(s.driver_version, "2.24.2");
  EXPECT_EQ(s.counters.at("Mmap").fields.at("munmap"), 1);
}

// With "IO stats: Enabled" the driver prints a second Reads and Writes line
// (Bandwidth, latency) under the same name (gds-nvidia-fs nvfs-stat.c).
TEST(NvfsStats, KeepsTheCountsWhenIoStatsAddABandwidthLine) {
  auto s = parse_nvfs_stats(
      "IO stats: Enabled, peer IO stats: Enabled\n"
      "Reads\t\t\t\t: n=12 ok=11 err=1 readMiB=12 io_state_err=0\n"
      "Reads\t\t\t\t: Bandwidth(MiB/s)=900 Avg-Latency(usec)=40\n",
      "s");
  const auto& reads = s.counters.at("Reads");
  EXPECT_EQ(reads.fields.at("err"), 1);
  EXPECT_EQ(reads.fields.at("n"), 12);
  EXPECT_EQ(reads.fields.at("Bandwidth(MiB/s)"), 900);
  EXPECT_EQ(reads.line, 2);
}

TEST(NvfsStatsOnSeedFixture, RefusesALocalisedCounter) {
  EXPECT_EQ(error_of([] { parse_nvfs_stats(read_fixture("gds/stats-localised.txt"), "stats-localised.txt"); }),
            "stats-localised.txt:11:20: counter value \"10.240\" is not an integer (localised number?)");
}

TEST(LnetOnSeedFixture, ReadsNidsAndStatus) {
  auto nis = parse_lnet(read_fixture("gds/lnet-show.txt"), "l");
  ASSERT_EQ(nis.size(), 8u);
  EXPECT_EQ(nis[0].nid, "10.1.2.11@efa");
  EXPECT_EQ(nis[0].status, "up");
  EXPECT_EQ(parse_lnet(read_fixture("gds/lnet-show-one-down.txt"), "l")[2].status, "down");
  EXPECT_EQ(parse_lnet(read_fixture("variants/crlf/lnetctl-efa.txt"), "l").size(), 8u);
}

TEST(LnetOnSeedFixture, PairsGreppedCounterLines) {
  auto nis = parse_lnet(read_fixture("gds/lnet-after.txt"), "l");
  ASSERT_EQ(nis.size(), 8u);
  EXPECT_EQ(nis[4].send_count, 17442);
  EXPECT_EQ(nis[4].recv_count, 24611);
  EXPECT_EQ(nis[7].send_count, 19);
}

TEST(LnetOnSeedFixture, RefusesALocalisedCount) {
  EXPECT_EQ(error_of([] { parse_lnet(read_fixture("gds/lnet-localised.txt"), "lnet-localised.txt"); }),
            "lnet-localised.txt:9:27: \"2,063\" is not a message count (localised number?)");
}

}  // namespace
}  // namespace trainimg::host
