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
  return testing::error_of([&] { parse_nccl_tests(read_fixture("nccl/" + name), name); });
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

// Written in the layout of nccl-tests' writeResultHeader/writeBenchmarkLine*
// (NVIDIA/nccl-tests src/util.cu), one variant per option that changes it.
const char kHeader[] =
    "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   "
    "busbw #wrong\n"
    "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  "
    "(GB/s)       \n";
const char kFooter[] = "# Out of bounds values : 0 OK\n# Avg bus bandwidth    : 12.5 \n";

// One data row between kHeader and kFooter, parsed.
NcclTests parse_row(const std::string& row) {
  return parse_nccl_tests(kHeader + row + "\n" + kFooter, "f");
}

TEST(NcclTests, ReadsRowsBehindSrunAndMpirunLabels) {
  std::string text = std::string("0: # nThread 1 nGpus 1 minBytes 8 maxBytes 1024\n") +
                     "0: #       size         count      type   redop    root     time   algbw   busbw "
                     "#wrong     time   algbw   busbw #wrong\n"
                     "0:         1024           256     float     sum      -1    20.00    0.05    0.09      "
                     "0    19.00    0.05    0.10      0\n"
                     "[1,0]<stdout>:      2048           512     float     sum      -1    20.00    0.10    "
                     "0.18      0    19.00    0.11    0.19      0\n"
                     "0: # Out of bounds values : 0 OK\n"
                     "0: # Avg bus bandwidth    : 0.14 \n";
  NcclTests t = parse_nccl_tests(text, "f");
  ASSERT_EQ(t.rows.size(), 2u);
  EXPECT_EQ(t.rows[1].size, 2048);
  EXPECT_DOUBLE_EQ(t.rows[1].ip_busbw, 0.19);
  EXPECT_EQ(t.out_of_bounds, 0);
  EXPECT_DOUBLE_EQ(*t.avg_busbw, 0.14);
}

TEST(NcclTests, ATimestampColumnHoldsTwoWords) {
  std::string text =
      "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw "
      "  busbw #wrong           timestamp\n"
      "        1024           256     float     sum      -1    20.00    0.05    0.09      0    19.00    0.05 "
      "   0.10      0 2026-12-04 17:00:01\n" +
      std::string(kFooter);
  NcclTests t = parse_nccl_tests(text, "f");
  ASSERT_EQ(t.rows.size(), 1u);
  EXPECT_DOUBLE_EQ(t.rows[0].ip_busbw, 0.10);
}

TEST(NcclTests, AWrongCountPrintedWithAnExponentIsACount) {
  // %6g prints 1000000 wrong elements as "1e+06".
  NcclTests t = parse_row(
      "        1024           256     float     sum      -1    20.00    0.05    0.09  1e+06   "
      " 19.00    0.05    0.10      0");
  ASSERT_EQ(t.rows.size(), 1u);
  EXPECT_EQ(t.rows[0].oop_wrong, 1000000);
}

TEST(NcclTests, AnInPlaceOnlyRowFillsTheInPlaceGroup) {
  // Trace replay prints blanks for the out-of-place group.
  NcclTests t = parse_row(
      "        1024           256     float     sum      -1                                   "
      " 19.00    0.05    0.10      0");
  ASSERT_EQ(t.rows.size(), 1u);
  EXPECT_DOUBLE_EQ(t.rows[0].ip_busbw, 0.10);
  EXPECT_DOUBLE_EQ(t.rows[0].oop_busbw, 0);
  EXPECT_EQ(t.rows[0].ip_wrong, 0);
  EXPECT_FALSE(t.rows[0].oop_wrong.has_value());
}

TEST(NcclTests, TheOldErrorColumnAndCputimeHeadersAreRead) {
  std::string text =
      "#       size         count      type   redop     time   algbw   busbw  error     time   algbw   busbw "
      " error\n"
      "        1024           256     float     sum    20.00    0.05    0.09  0e+00    19.00    0.05    0.10 "
      " 0e+00\n"
      "#       size         count      type   redop    root  cputime   algbw   busbw #wrong  cputime   algbw "
      "  busbw #wrong\n"
      "        2048           512     float     sum      -1    20.00    0.10    0.18    N/A    19.00    0.11 "
      "   0.19    N/A\n" +
      std::string(kFooter);
  NcclTests t = parse_nccl_tests(text, "f");
  ASSERT_EQ(t.rows.size(), 2u);
  EXPECT_DOUBLE_EQ(t.rows[1].oop_busbw, 0.18);
}

TEST(NcclTests, ALaterCleanRunDoesNotHideAnEarlierFailure) {
  std::string row =
      "        1024           256     float     sum      -1    20.00    0.05    0.09      0    19.00    0.05 "
      "   0.10      0\n";
  std::string text = std::string(kHeader) + row +
                     "# Out of bounds values : 4 FAILED\n# Avg bus bandwidth    : 0.1 \n" + kHeader + row +
                     "# Out of bounds values : 0 OK\n# Avg bus bandwidth    : 0.1 \n";
  NcclTests t = parse_nccl_tests(text, "f");
  EXPECT_EQ(t.out_of_bounds, 4);
  EXPECT_EQ(t.out_of_bounds_line, 4);
}

// Public outputs (docker containers named by hex ids, an Open MPI banner, a
// README that indents `kubectl logs`, dstack's page without the '#'s): the
// rows are read, the chatter between them is not.
TEST(NcclTests, NcclLogLinesOfDigitHostsAndBannersBetweenRowsAreChatter) {
  std::string row =
      "        1024           256     float     sum      -1    20.00    0.05    0.09      0    19.00    0.05 "
      "   0.10      0\n";
  std::string text = std::string(kHeader) + row +
                     "3767c65d25c4:880:880 [1] NCCL INFO comm 0x55d1 rank 1 nranks 2 cudaDev 1 - Destroy "
                     "COMPLETE\n" +
                     "--------------------------------------------------------------------------\n" + row +
                     kFooter;
  NcclTests t = parse_nccl_tests(text, "f");
  EXPECT_EQ(t.rows.size(), 2u);
  EXPECT_EQ(t.out_of_bounds, 0);
}

TEST(NcclTests, IndentedMpirunTagsAndOutputWithoutHashesAreRead) {
  std::string indented =
      "    [1,0]<stdout>:#       size         count      type   redop    root     time   algbw   busbw "
      "#wrong "
      "    time   algbw   busbw #wrong\n"
      "    [1,0]<stdout>:        1024           256     float     sum      -1    20.00    0.05    0.09      "
      "0 "
      "   19.00    0.05    0.10      0\n"
      "    [1,0]<stdout>:# Out of bounds values : 0 OK\n";
  NcclTests a = parse_nccl_tests(indented, "f");
  ASSERT_EQ(a.rows.size(), 1u);
  EXPECT_DOUBLE_EQ(a.rows[0].ip_busbw, 0.10);
  EXPECT_EQ(a.out_of_bounds, 0);
  std::string bare =
      "       size         count      type   redop    root     time   algbw   busbw  wrong     time   algbw  "
      " "
      "busbw  wrong\n"
      "        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  "
      "(GB/s)\n"
      "        1024           256     float     sum      -1    20.00    0.05    0.09      3    19.00    0.05 "
      "   0.10      0\n"
      " Out of bounds values : 0 OK\n"
      " Avg bus bandwidth    : 0.095\n";
  NcclTests b = parse_nccl_tests(bare, "f");
  ASSERT_EQ(b.rows.size(), 1u);
  EXPECT_EQ(b.rows[0].oop_wrong, 3);
  EXPECT_EQ(b.out_of_bounds, 0);
  EXPECT_DOUBLE_EQ(*b.avg_busbw, 0.095);
}

// -c 0: every #wrong is N/A; the run checked nothing: a warning says so.
TEST(NcclTests, ARunThatCheckedNothingIsAWarning) {
  NcclTests t = parse_row(
      "        1024           256     float     sum      -1    20.00    0.05    0.09    N/A    19.00    0.05 "
      "   0.10    N/A");
  auto out = check_nccl_tests(t, "", "f", std::nullopt, 0.9);
  ASSERT_EQ(out.findings.size(), 1u);
  EXPECT_EQ(out.findings[0].severity, Severity::Warning);
  EXPECT_EQ(
      out.findings[0].message,
      "every #wrong is N/A: the run did not check its results (-c 0), so `Out of bounds values : 0` proves "
      "nothing; run with -c 1");
  NcclTests checked = parse_row(
      "        1024           256     float     sum      -1    20.00    0.05    0.09      0    19.00    0.05 "
      "   0.10      0");
  EXPECT_THAT(check_nccl_tests(checked, "", "f", std::nullopt, 0.9).findings, IsEmpty());
}

// A run that aborts says why; the finding quotes it.
TEST(NcclTests, AnAbortedRunIsQuoted) {
  std::string text =
      std::string(kHeader) +
      "GENOA-06: Test NCCL failure common.cu:392 'unhandled cuda error (run with NCCL_DEBUG=INFO "
      "for details) / '\n";
  auto out = check_nccl_tests(parse_nccl_tests(text, "f"), text, "f", std::nullopt, 0.9);
  ASSERT_EQ(out.findings.size(), 1u);
  EXPECT_EQ(out.findings[0].line, 3);
  EXPECT_EQ(
      out.findings[0].message,
      "the run aborted: Test NCCL failure common.cu:392 'unhandled cuda error (run with NCCL_DEBUG=INFO for "
      "details) / '");
}

TEST(NcclTests, RefusesANegativeSize) {
  EXPECT_THROW(
      parse_row("          -8             2     float     sum      -1    10.00    0.00    0.00      0"
                "    10.00    0.00    0.00      0"),
      Error);
}

}  // namespace
}  // namespace trainimg::host
