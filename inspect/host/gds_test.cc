// SPDX-License-Identifier: GPL-3.0-or-later
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "inspect/host/parsers.h"
#include "inspect/host/rules.h"
#include "inspect/host/test_support.h"

namespace trainimg::host {
namespace {
using ::testing::ElementsAre;
using ::testing::IsEmpty;
using testing::located;
using testing::messages;
using testing::read_fixture;

CheckOutput gdscheck(const std::string& name) {
  CheckOutput out;
  std::string text = read_fixture("gds/" + name);
  check_gdscheck(parse_gdscheck(text), text, name, "2.24.2", out);
  return out;
}

CheckOutput counters(const std::string& before, const std::string& after, GdsMode mode) {
  CheckOutput out;
  auto b = parse_nvfs_stats(read_fixture("gds/" + before), before);
  auto a = parse_nvfs_stats(read_fixture("gds/" + after), after);
  check_gds_counters(b, a, before, after, mode, 1 << 20, out);
  return out;
}

TEST(GdscheckOnSeedFixture, TheSeedsNormalOutputPassesAllFiveLines) {
  auto g = parse_gdscheck(read_fixture("gds/gdscheck-ok.txt"));
  EXPECT_EQ(g.nvidia_fs_version, "2.30");
  EXPECT_EQ(g.exascaler, "nvfs, compat");
  EXPECT_EQ(g.gpus.size(), 8u);
  EXPECT_EQ(g.iommu, "disabled");
  EXPECT_EQ(g.cuda_driver, "13020");
  EXPECT_THAT(gdscheck("gdscheck-ok.txt").findings, IsEmpty());
}

TEST(GdscheckOnSeedFixture, CompatOnlyExascalerFails) {
  EXPECT_THAT(located(gdscheck("gdscheck-compat-only.txt").findings),
              ElementsAre("gdscheck-compat-only.txt:5:1: ② DDN EXAScaler (Lustre) is `compat` without nvfs: no GDS path for "
                          "Lustre, only CPU compat mode [gdscheck]"));
}

// Written in the layout of gdscheck before the per-mode lists (GDS 1.14,
// CRLF, a log warning first): "DDN EXAScaler : Supported" is the nvfs path.
TEST(Gdscheck, TheOlderSupportedSpellingIsTheNvfsPath) {
  auto g = parse_gdscheck(read_fixture("gds/gdscheck-old-supported.txt"));
  EXPECT_EQ(g.nvidia_fs_version, "2.25");
  EXPECT_EQ(g.nvidia_fs_min, std::nullopt);
  EXPECT_EQ(g.gpus.size(), 2u);
  EXPECT_THAT(gdscheck("gdscheck-old-supported.txt").findings, IsEmpty());
}

TEST(GdscheckOnSeedFixture, AGpuWithoutGdsFails) {
  EXPECT_THAT(located(gdscheck("gdscheck-gpu-without-gds.txt").findings),
              ElementsAre("gdscheck-gpu-without-gds.txt:17:1: ③ GPU index 5 does not report `supports GDS` [gdscheck]"));
}

TEST(GdscheckOnSeedFixture, IommuAndFailedVerification) {
  EXPECT_THAT(messages(gdscheck("gdscheck-failed.txt").findings, "gdscheck"),
              ElementsAre("④ IOMMU: enabled, expected disabled",
                          "⑤ the last line is `Platform verification failed`, not `Platform verification succeeded`"));
}

TEST(GdscheckOnSeedFixture, OldNvidiaFsFailsButTwoThirtyPasses) {
  EXPECT_THAT(messages(gdscheck("gdscheck-old-nvidia-fs.txt").findings, "gdscheck"),
              ElementsAre("① nvidia_fs version 2.17 is below the minimum 2.24.2"));
}

TEST(GdscheckOnSeedFixture, TruncatedOutputNamesTheMissingLines) {
  EXPECT_THAT(messages(gdscheck("gdscheck-truncated.txt").findings, "gdscheck"),
              ElementsAre("④ no `IOMMU:` line (the output is cut?)",
                          "⑤ the last line is `GPU index 2 NVIDIA <GPU> bar:1 bar size (MiB):262144 supports GDS, IOMMU "
                          "State: Disabled`, not `Platform verification succeeded`"));
}

TEST(GdsCountersOnSeedFixture, TheSeedsGdsRunShowsTheArithmetic) {
  auto out = counters("stats-before.txt", "stats-after-gds.txt", GdsMode::GdsRead);
  EXPECT_THAT(out.findings, IsEmpty());
  EXPECT_THAT(out.text_facts,
              ElementsAre(std::pair<std::string, std::string>("Mmap", "4 → 12 (+8)"),
                          std::pair<std::string, std::string>("Bar1-map", "4 → 12 (+8)"),
                          std::pair<std::string, std::string>("Sparse Reads", "0 → 10240 (+10240 = 10 GiB / 1 MiB)")));
}

TEST(GdsCountersOnSeedFixture, UnchangedCountersAfterGdsMeanCompatMode) {
  auto out = counters("stats-before.txt", "stats-after-compat.txt", GdsMode::GdsRead);
  EXPECT_THAT(located(out.findings),
              ElementsAre("stats-after-compat.txt:13: Mmap 4 → 4 (+0) after a GDS read: the I/O did not take the GDS "
                          "path (cuFile compat mode, through the CPU) [gds-compat-mode]",
                          "stats-after-compat.txt:14: Bar1-map 4 → 4 (+0) after a GDS read: the I/O did not take the GDS "
                          "path (cuFile compat mode, through the CPU) [gds-compat-mode]",
                          "stats-after-compat.txt:11: Sparse Reads 0 → 0 (+0) after a GDS read: the I/O did not take the "
                          "GDS path (cuFile compat mode, through the CPU) [gds-compat-mode]"));
  // A write does not need Sparse Reads to move.
  EXPECT_EQ(counters("stats-before.txt", "stats-after-compat.txt", GdsMode::GdsWrite).findings.size(), 2u);
}

TEST(GdsCountersOnSeedFixture, TheCpuRunLeavesCountersAlone) {
  EXPECT_THAT(counters("stats-after-gds.txt", "stats-after-cpu.txt", GdsMode::Cpu).findings, IsEmpty());
  EXPECT_THAT(messages(counters("stats-after-gds.txt", "stats-after-cpu-moved.txt", GdsMode::Cpu).findings, "gds-compat-mode"),
              ElementsAre("Sparse Reads 10240 → 10752 (+512 = 512 MiB / 1 MiB) after a CPU-only run: these counters must stay the same "
                          "(another GDS job ran, or the files are not the right before/after pair)"));
}

TEST(GdsCountersOnSeedFixture, AnyErrorCountFails) {
  EXPECT_THAT(messages(counters("stats-before.txt", "stats-after-errors.txt", GdsMode::GdsRead).findings, "gds-compat-mode"),
              ElementsAre("Mmap err=2 (every error count must be 0)"));
}

TEST(LnetCountersOnSeedFixture, TheSeedsTableShowsTrafficOnTwoInterfaces) {
  CheckOutput out;
  check_lnet_counters(parse_lnet(read_fixture("gds/lnet-before.txt"), "b"), parse_lnet(read_fixture("gds/lnet-after.txt"), "a"),
                      "a", 8, true, out);
  EXPECT_THAT(out.findings, IsEmpty());
  EXPECT_EQ(out.notes[4], "EFA interface 5: send_count 2063 → 17442 (+15379), recv_count 4111 → 24611 (+20500)");
}

TEST(LnetCountersOnSeedFixture, FlatCountersMeanNoEfaTraffic) {
  CheckOutput out;
  check_lnet_counters(parse_lnet(read_fixture("gds/lnet-before.txt"), "b"),
                      parse_lnet(read_fixture("gds/lnet-after-flat.txt"), "a"), "lnet-after-flat.txt", 8, true, out);
  EXPECT_THAT(messages(out.findings, "lnet-efa"),
              ElementsAre("no EFA interface carried FSx traffic (largest send+recv increase +8 messages, < 1000): FSx "
                          "traffic did not flow over EFA"));
}

TEST(LnetCountersOnSeedFixture, ADifferentInterfaceCountIsFlagged) {
  CheckOutput out;
  check_lnet_counters(parse_lnet(read_fixture("gds/lnet-before.txt"), "b"),
                      parse_lnet(read_fixture("gds/lnet-after-six.txt"), "a"), "a", 8, true, out);
  EXPECT_THAT(messages(out.findings, "lnet-efa"), ElementsAre("the before and after counters list 8 and 6 interfaces"));
}

TEST(LnetInterfacesOnSeedFixture, EightUpPassesOneDownOrTcpFails) {
  CheckOutput ok, down, tcp;
  check_lnet_interfaces(parse_lnet(read_fixture("gds/lnet-show.txt"), "l"), "l", 8, ok);
  EXPECT_THAT(ok.findings, IsEmpty());
  check_lnet_interfaces(parse_lnet(read_fixture("gds/lnet-show-one-down.txt"), "l"), "l", 8, down);
  EXPECT_THAT(located(down.findings), ElementsAre("l:12: LNet interface 10.1.2.13@efa is `status: down`, expected up [lnet-efa]"));
  check_lnet_interfaces(parse_lnet(read_fixture("gds/lnet-show-tcp-only.txt"), "l"), "l", 8, tcp);
  EXPECT_THAT(messages(tcp.findings, "lnet-efa"),
              ElementsAre("no `nid: …@efa` entry: LNet is not configured for EFA, FSx traffic goes over TCP"));
}

TEST(NvidiaFsVersion, TwoPartVersionsCompareOnTwoParts) {
  CheckOutput a, b, c;
  check_nvidia_fs_version("2.24", true, "gdscheck", "2.24.2", a);
  EXPECT_THAT(a.findings, IsEmpty());
  check_nvidia_fs_version("2.24.1", false, "stats", "2.24.2", b);
  EXPECT_THAT(messages(b.findings, "nvidia-fs"), ElementsAre("nvidia-fs 2.24.1 is below the minimum 2.24.2"));
  check_nvidia_fs_version(std::nullopt, false, "stats", "2.24.2", c);
  EXPECT_EQ(c.findings.size(), 1u);
}

// Found by fuzz_host: a GPU index no int holds threw std::out_of_range out
// of the parser; such a line is no GPU line.
TEST(Gdscheck, AGpuIndexNoIntHoldsIsNoGpuLine) {
  GdscheckReport g = parse_gdscheck(
      "GPU index 99999999999999999999 NVIDIA <GPU> bar:1 supports GDS\n"
      "GPU index 0 NVIDIA <GPU> bar:1 bar size (MiB):262144 supports GDS, IOMMU State: Disabled\n");
  ASSERT_EQ(g.gpus.size(), 1u);
  EXPECT_EQ(g.gpus[0].index, 0);
  EXPECT_EQ(g.gpus[0].line, 2);
}

}  // namespace
}  // namespace trainimg::host
