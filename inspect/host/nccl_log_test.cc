// SPDX-License-Identifier: GPL-3.0-or-later
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "inspect/host/parsers.h"
#include "inspect/host/test_support.h"

namespace trainimg::host {
namespace {
using ::testing::ElementsAre;
using ::testing::IsEmpty;
using testing::located;
using testing::read_fixture;

CheckOutput run(const std::string& name, std::optional<int> nics = 8) {
  std::string text = read_fixture("nccl/" + name);
  return check_nccl_log(parse_nccl_log(text), text, name, nics);
}

TEST(NcclLogOnSeedFixture, ReadsSixteenInterleavedRanks) {
  NcclLog log = parse_nccl_log(read_fixture("nccl/log-efa-2node.txt"));
  ASSERT_EQ(log.processes.size(), 16u);
  const auto& p = log.processes[9];
  EXPECT_EQ(p.host, "p6-node-002");
  EXPECT_EQ(p.pid, "20101");
  EXPECT_EQ(p.network, "Libfabric");
  EXPECT_EQ(p.provider, "efa");
  EXPECT_EQ(p.fabric, "efa-direct");
  EXPECT_EQ(p.nics, 8);
}

TEST(NcclLogOnSeedFixture, TheSeedsEfaLogIsClean) {
  auto out = run("log-efa-2node.txt");
  EXPECT_THAT(out.findings, IsEmpty());
  EXPECT_EQ(out.text_facts[0], (std::pair<std::string, std::string>("processes", "16 on 2 host(s)")));
  EXPECT_EQ(out.text_facts[1].second, "16/16");
  EXPECT_THAT(run("log-efa-2node-crlf.txt").findings, IsEmpty());
}

TEST(NcclLogOnSeedFixture, FlagsTheSocketFallbackOncePerProcess) {
  auto out = run("log-socket-fallback.txt");
  ASSERT_EQ(out.findings.size(), 8u);
  EXPECT_EQ(located(out.findings)[0],
            "log-socket-fallback.txt:76:42: p6-node-002:20100 uses `Using network Socket`: NCCL fell back to "
            "TCP, not EFA "
            "[nccl-log]");
}

TEST(NcclLogOnSeedFixture, FlagsForcedIb) {
  auto out = run("log-ib-forced.txt");
  ASSERT_EQ(out.findings.size(), 18u);  // 16 processes + no Libfabric + no efa provider
  EXPECT_EQ(
      out.findings[0].message,
      "p6-node-001:20000 uses `Using network IB`, not Libfabric (where EFA is the fabric, forcing IB with "
      "NCCL_NET=IB puts the link-DOWN ConnectX-7 devices in use and initialisation fails)");
  EXPECT_EQ(out.findings[16].message,
            "no process logged `Using network Libfabric`: the EFA path was not used");
}

TEST(NcclLogOnSeedFixture, FlagsAWrongNicCountOnlyWhenExpected) {
  auto out = run("log-4-nics.txt");
  ASSERT_EQ(out.findings.size(), 16u);
  EXPECT_EQ(out.findings[0].message, "p6-node-001:20000 found 4 nics, expected 8");
  EXPECT_THAT(run("log-4-nics.txt", std::nullopt).findings, IsEmpty());
}

TEST(NcclLogOnSeedFixture, FlagsAnotherProvider) {
  auto out = run("log-tcp-provider.txt");
  EXPECT_EQ(out.findings.back().message,
            "no process logged `NET/OFI Selected provider is efa`: the OFI plugin did not select EFA");
}

TEST(NcclLogOnSeedFixture, ALogWithoutDebugLinesSaysHowToGetThem) {
  auto out = run("log-no-debug.txt");
  ASSERT_EQ(out.findings.size(), 1u);
  EXPECT_EQ(
      out.findings[0].message,
      "no NCCL_DEBUG=INFO lines (\"host:pid:tid [dev] NCCL INFO …\") in the log: run with NCCL_DEBUG=INFO");
}

TEST(NcclLog, AcceptsTheOlderProviderLine) {
  std::string text =
      "ip-1:5:5 [0] NCCL INFO NET/OFI Selected Provider is efa (found 4 nics)\n"
      "ip-1:5:5 [0] NCCL INFO Using network Libfabric\n";
  auto out = check_nccl_log(parse_nccl_log(text), text, "l", 4);
  EXPECT_THAT(out.findings, IsEmpty());
}

// aws-ofi-nccl before 1.6.0 printed no nic count (aws-samples/aws-efa-eks's
// p4d logs, NCCL 2.9.9): EFA is selected; --expect-nics cannot be checked,
// and a note says so.
TEST(NcclLog, TheProviderLineWithoutANicCountSelectsEfa) {
  std::string text =
      "[1,0]<stdout>:worker-0:25:25 [0] NCCL INFO NET/OFI Selected Provider is efa\n"
      "[1,0]<stdout>:worker-0:25:25 [0] NCCL INFO Using network AWS Libfabric\n";
  NcclLog log = parse_nccl_log(text);
  ASSERT_EQ(log.processes.size(), 1u);
  EXPECT_EQ(log.processes[0].provider, "efa");
  EXPECT_FALSE(log.processes[0].nics.has_value());
  auto out = check_nccl_log(log, text, "l", 4);
  EXPECT_THAT(out.findings, IsEmpty());
  ASSERT_EQ(out.notes.size(), 1u);
  EXPECT_EQ(out.notes[0],
            "--expect-nics not checked: no process printed `(found N nics)` (aws-ofi-nccl before 1.6.0 "
            "prints none)");
  EXPECT_THAT(check_nccl_log(log, text, "l", std::nullopt).notes, IsEmpty());
  std::string tcp = "h:1:1 [0] NCCL INFO NET/OFI Selected Provider is tcp\n";
  EXPECT_EQ(parse_nccl_log(tcp).processes.at(0).provider, "tcp");
}

// A log cut before "Using network" still shows the network its channels
// ran over: Libfabric counts (a note says how it was told), Socket is the
// fallback; a "Using network" line, where there is one, decides.
TEST(NcclLog, ChannelLinesTellTheNetworkOfALogCutBeforeUsingNetwork) {
  std::string cut =
      "ip-1:5:9 [6] NCCL INFO Channel 07/0 : 6[6] -> 14[6] [send] via NET/Libfabric/6/GDRDMA\n"
      "ip-1:5:9 [6] NCCL INFO NET/OFI Selected provider is efa, fabric is efa (found 4 nics)\n";
  auto out = check_nccl_log(parse_nccl_log(cut), cut, "l", 4);
  EXPECT_THAT(out.findings, IsEmpty());
  ASSERT_EQ(out.notes.size(), 1u);
  EXPECT_EQ(
      out.notes[0],
      "1 process(es) logged no `Using network` line; their `via NET/Libfabric` channel lines count (the "
      "log is cut?)");
  std::string socket = "ip-1:5:9 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[0] [send] via NET/Socket/0\n";
  auto s = check_nccl_log(parse_nccl_log(socket), socket, "l", std::nullopt);
  ASSERT_FALSE(s.findings.empty());
  EXPECT_EQ(s.findings[0].message, "ip-1:5 uses `via NET/Socket` channels: NCCL fell back to TCP, not EFA");
  EXPECT_EQ(s.findings[0].column, 59);  // the caret on "via NET/"
  std::string both = "ip-1:5:5 [0] NCCL INFO Using network Socket\n" + cut;
  EXPECT_EQ(check_nccl_log(parse_nccl_log(both), both, "l", 4).findings.at(0).message,
            "ip-1:5 uses `Using network Socket`: NCCL fell back to TCP, not EFA");
}

// Lines quoted without their "host:pid:tid [dev]" prefix still say what
// NCCL did: one process of unknown host, and a note.
TEST(NcclLog, LinesWithoutTheProcessPrefixAreOneUnknownProcess) {
  std::string text =
      "NCCL INFO NET/OFI Selected provider is efa, fabric is efa (found 4 nics)\n"
      "  NCCL INFO Using network Libfabric\n"
      "NCCL version 2.19.3+cuda12.3\n";
  NcclLog log = parse_nccl_log(text);
  ASSERT_EQ(log.processes.size(), 1u);
  EXPECT_EQ(log.processes[0].host, "?");
  EXPECT_EQ(log.nccl_lines, 2);
  EXPECT_EQ(log.unprefixed_lines, 2);
  auto out = check_nccl_log(log, text, "l", 4);
  EXPECT_THAT(out.findings, IsEmpty());
  ASSERT_EQ(out.notes.size(), 1u);
  EXPECT_EQ(out.notes[0],
            "2 NCCL line(s) without their \"host:pid:tid [dev]\" prefix, counted as one process");
  std::string socket = "NCCL INFO Using network Socket\n";
  EXPECT_EQ(check_nccl_log(parse_nccl_log(socket), socket, "l", std::nullopt).findings.size(), 3u);
}

// aws-ofi-nccl 1.11.0 and earlier registered its plugin as "AWS Libfabric"
// (public NCCL_DEBUG logs of p4d nodes: "Using network AWS Libfabric"); later
// releases take that name or "OFI" from NCCL_NET: the same Libfabric path.
TEST(NcclLog, TheOlderAwsLibfabricPluginNameIsLibfabric) {
  std::string text =
      "algo-1:18:18 [0] NCCL INFO NET/OFI Selected Provider is efa (found 4 nics)\n"
      "algo-1:18:18 [0] NCCL INFO Using non-device net plugin version 0\n"
      "algo-1:18:18 [0] NCCL INFO Using network AWS Libfabric\n";
  NcclLog log = parse_nccl_log(text);
  ASSERT_EQ(log.processes.size(), 1u);
  EXPECT_EQ(log.processes[0].network, "AWS Libfabric");
  auto out = check_nccl_log(log, text, "l", 4);
  EXPECT_THAT(out.findings, IsEmpty());
  EXPECT_EQ(out.text_facts[1].second, "1/1");
  std::string ofi =
      "h:1:1 [0] NCCL INFO NET/OFI Selected provider is efa, fabric is efa (found 4 nics)\n"
      "h:1:1 [0] NCCL INFO Using network OFI\n";
  EXPECT_THAT(check_nccl_log(parse_nccl_log(ofi), ofi, "l", 4).findings, IsEmpty());
}

TEST(NcclLog, ANetworkNameIsOneWord) {
  std::string text = "h:1:1 [0] NCCL INFO Using network Socket \r\n";
  EXPECT_EQ(parse_nccl_log(text).processes.at(0).network, "Socket");
}

// NCCL 2.26+ prepends "[%F %T] " with NCCL_DEBUG_TIMESTAMP_LEVELS=INFO;
// CloudWatch and srun add their own prefixes; mpirun --tag-output too.
TEST(NcclLog, ReadsLinesBehindTimestampsAndLauncherLabels) {
  std::string text =
      "[2026-12-04 17:00:00] 0: p5-1:7:7 [0] NCCL INFO NET/OFI Selected provider is efa, fabric is efa "
      "(found 32 nics)\n"
      "2026-12-04T17:00:00.479Z | p5-1:7:7 [0] NCCL INFO Using network Libfabric\n"
      "[1,1]<stdout>:p5-2:9:9 [1] NCCL INFO Using network Libfabric\n";
  NcclLog log = parse_nccl_log(text);
  ASSERT_EQ(log.processes.size(), 2u);
  EXPECT_EQ(log.processes[0].host, "p5-1");
  EXPECT_EQ(log.processes[0].nics, 32);
  EXPECT_EQ(log.processes[0].network, "Libfabric");
  EXPECT_EQ(log.processes[1].host, "p5-2");
}

// Found by fuzz_host: a count no int holds threw std::out_of_range out of
// the parser; it is no count NCCL printed, so it is left unknown.
TEST(NcclLog, ANicCountNoIntHoldsIsUnknownNotAThrow) {
  std::string text =
      "ip-1:5:5 [0] NCCL INFO NET/OFI Selected provider is efa (found 99999999999999999999 nics)\n";
  NcclLog log = parse_nccl_log(text);
  ASSERT_EQ(log.processes.size(), 1u);
  EXPECT_EQ(log.processes[0].provider, "efa");
  EXPECT_FALSE(log.processes[0].nics.has_value());
}

}  // namespace
}  // namespace trainimg::host
