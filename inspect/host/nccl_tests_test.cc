// SPDX-License-Identifier: GPL-3.0-or-later
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "common/error.h"
#include "inspect/host/parsers.h"
#include "inspect/host/test_support.h"

namespace trainimg::host {
namespace {
using ::testing::IsEmpty;
using testing::located;
using testing::read_fixture;

CheckOutput run(const std::string& name, std::optional<double> base = 711, double ratio = 0.9) {
  std::string text = read_fixture("nccl/" + name);
  return check_nccl_tests(parse_nccl_tests(text, name), text, name, base, ratio);
}

std::string error_of(const std::string& name) {
  try {
    parse_nccl_tests(read_fixture("nccl/" + name), name);
  } catch (const Error& e) {
    return e.diagnostic().location() + ": " + e.diagnostic().message;
  }
  return "no error";
}

TEST(NcclTestsOnSeedFixture, ParsesEveryRowBothGroups) {
  NcclTests t = parse_nccl_tests(read_fixture("nccl/allreduce-single-node.txt"), "f");
  ASSERT_EQ(t.rows.size(), 28u);  // 8 B .. 1 GiB, factor 2
  EXPECT_EQ(t.rows.back().size, 1073741824);
  EXPECT_DOUBLE_EQ(t.rows.back().oop_busbw, 711.72);
  EXPECT_DOUBLE_EQ(t.rows.back().ip_busbw, 713.15);
  EXPECT_EQ(t.rows.back().oop_wrong, 0);
  EXPECT_EQ(t.out_of_bounds, 0);
  EXPECT_DOUBLE_EQ(*t.avg_busbw, 203.4476);
}

TEST(NcclTestsOnSeedFixture, TheSeedsSingleNodeRunPassesAgainst711) {
  auto out = run("allreduce-single-node.txt");
  EXPECT_THAT(out.findings, IsEmpty());
  EXPECT_THAT(run("allreduce-crlf.txt").findings, IsEmpty());
}

TEST(NcclTestsOnSeedFixture, OutOfBoundsIsAnError) {
  auto out = run("allreduce-out-of-bounds.txt");
  ASSERT_EQ(out.findings.size(), 1u);
  EXPECT_EQ(located(out.findings)[0],
            "allreduce-out-of-bounds.txt:44:1: Out of bounds values : 3 (must be 0: a correctness failure "
            "regardless of "
            "performance) [nccl-tests]");
}

TEST(NcclTestsOnSeedFixture, WrongValuesAreAnError) {
  auto out = run("allreduce-wrong.txt");
  ASSERT_EQ(out.findings.size(), 1u);
  EXPECT_EQ(located(out.findings)[0],
            "allreduce-wrong.txt:33:1: 2 wrong value(s) at size 1048576 B (#wrong) [nccl-tests]");
}

TEST(NcclTestsOnSeedFixture, SlowBusbwBelowTheUsersBaselineIsAnErrorWithTheArithmetic) {
  auto out = run("allreduce-slow.txt");
  ASSERT_EQ(out.findings.size(), 1u);
  EXPECT_EQ(out.findings[0].severity, Severity::Error);
  EXPECT_EQ(out.findings[0].message,
            "busbw 541.18 GB/s at 1 GiB is below 0.90 × baseline 711.00 GB/s = 639.90 GB/s (ratio 0.76)");
  EXPECT_THAT(run("allreduce-slow.txt", 711, 0.75).findings, IsEmpty());  // near miss
  EXPECT_THAT(run("allreduce-slow.txt", std::nullopt).findings, IsEmpty());
}

TEST(NcclTestsOnSeedFixture, ATruncatedRunIsFlaggedNotRefused) {
  auto out = run("allreduce-truncated.txt");
  ASSERT_EQ(out.findings.size(), 2u);
  EXPECT_EQ(located(out.findings)[0],
            "allreduce-truncated.txt:43:1: the last row is cut off: the run did not finish [nccl-tests]");
  EXPECT_EQ(out.findings[1].message,
            "no `# Out of bounds values` line: the output is truncated or the run did not finish");
}

TEST(NcclTestsOnSeedFixture, AnExtraColumnIsUnreadableInput) {
  EXPECT_EQ(error_of("allreduce-extra-column.txt"),
            "allreduce-extra-column.txt:33:120: row has 14 columns, the header names 13");
}

TEST(NcclTestsOnSeedFixture, LocalisedNumbersAreUnreadableInput) {
  EXPECT_EQ(error_of("allreduce-localised.txt"),
            "allreduce-localised.txt:33:57: number \"20,58\" uses ',' (localised output?)");
}

TEST(NcclTests, NoRowsIsAFinding) {
  std::string text = "# nThread 1 nGpus 1\nmpirun: command not found\n";
  auto out = check_nccl_tests(parse_nccl_tests(text, "f"), text, "f", std::nullopt, 0.9);
  ASSERT_EQ(out.findings.size(), 1u);
  EXPECT_EQ(out.findings[0].message,
            "no nccl-tests result rows (no `# size count …` header followed by rows)");
}

TEST(Sizes, ParseAndFormatLikeTheSeeds) {
  EXPECT_EQ(parse_size("1M"), 1048576);
  EXPECT_EQ(parse_size("10G"), 10737418240LL);
  EXPECT_EQ(parse_size("1.5M"), std::nullopt);
  // Found by fuzz_host (UBSan: signed overflow in the multiplication).
  EXPECT_EQ(parse_size("9999999999999999m"), std::nullopt);
  EXPECT_EQ(parse_size("8589934591G"), 9223372035781033984LL);
  EXPECT_EQ(format_bytes(10737418240LL), "10 GiB");
  EXPECT_EQ(format_bytes(1536 * 1024), "1536 KiB");
}

}  // namespace
}  // namespace trainimg::host
