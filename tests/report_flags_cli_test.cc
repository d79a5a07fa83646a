// SPDX-License-Identifier: GPL-3.0-or-later
// End-to-end: every checking command takes the report flags of the one
// report path (cmd/cli/cli.h): --format text|json|sarif|junit, -o FILE,
// --fail-on and --show-suppressed, with the same exit codes. Each case is a
// failing input of seed 000/004 fixtures, run in a temporary directory
// that holds a `.git` so that no config above it is read.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "tests/cli_test_util.h"

namespace {

namespace fs = std::filesystem;
using trainimg::testing::CliResult;
using trainimg::testing::put;
using trainimg::testing::slurp;
using trainimg::testing::TempDir;
using trainimg::testing::trainimg_in;

std::string fixture(const std::string& rel) {
  return "'" + std::string(TRAINIMG_SOURCE_DIR) + "/tests/fixtures/host/" + rel + "'";
}

struct Case {
  const char* name;
  std::string args;  // a command line whose input has at least one error
};

std::vector<Case> cases() {
  return {
      {"HostCheck", "host check " + fixture("h200-real/h200.json") + " --expect gpus=16,efas=32"},
      {"GdsCheck", "gds check --gdscheck " + fixture("gds/gdscheck-failed.txt")},
      {"CheckNcclLog", "check nccl-log " + fixture("nccl/log-socket-fallback.txt")},
      {"CheckNcclTests", "check nccl-tests " + fixture("nccl/allreduce-out-of-bounds.txt")},
  };
}

class ReportFlags : public ::testing::TestWithParam<Case> {
 protected:
  void SetUp() override {
    ASSERT_FALSE(tmp_.path().empty());
    fs::create_directories(tmp_.path() / ".git");
  }
  CliResult run(const std::string& flags) {
    return trainimg_in(tmp_.path().string(), GetParam().args + " " + flags);
  }
  fs::path file(const std::string& name) const { return tmp_.path() / name; }
  TempDir tmp_{"trainimg-report-flags"};
};

TEST_P(ReportFlags, EachFormatGoesToStdoutOrAtomicallyToOutputFile) {
  const std::pair<const char*, const char*> formats[] = {{"text", "error"},
                                                         {"json", "\"schema\": \"trainimg."},
                                                         {"sarif", "\"version\": \"2.1.0\""},
                                                         {"junit", "<testsuite"}};
  for (const auto& [format, marker] : formats) {
    SCOPED_TRACE(format);
    CliResult out = run(std::string("--format ") + format);
    EXPECT_EQ(out.rc, 1) << out.out;
    EXPECT_NE(out.out.find(marker), std::string::npos) << out.out;
    fs::path report = file(std::string("report.") + format);
    CliResult to_file = run(std::string("--format ") + format + " -o '" + report.string() + "'");
    EXPECT_EQ(to_file.rc, 1) << to_file.out;
    EXPECT_EQ(to_file.out, "") << "the report goes to the file, nothing to stdout";
    EXPECT_EQ(slurp(report), out.out);
  }
  // No temporary file is left beside the report.
  int files = 0;
  for (const auto& e : fs::directory_iterator(tmp_.path())) files += e.is_regular_file();
  EXPECT_EQ(files, 4);
}

TEST_P(ReportFlags, FailOnPicksTheExitCode) {
  EXPECT_EQ(run("--fail-on error").rc, 1);
  EXPECT_EQ(run("--fail-on warning").rc, 1);
  EXPECT_EQ(run("--fail-on never").rc, 0);
  EXPECT_EQ(run("--fail-on sometimes").rc, 2);
  EXPECT_EQ(run("--format xml").rc, 2);
}

TEST_P(ReportFlags, ShowSuppressedListsWhatTheConfigHid) {
  CliResult before = run("--format json");
  ASSERT_EQ(before.rc, 1) << before.out;
  std::set<std::string> ids;
  // Parsed first: a range-for over a member of a temporary would dangle.
  const nlohmann::json found = nlohmann::json::parse(before.out);
  for (const auto& f : found["findings"]) ids.insert(f["rule"].get<std::string>());
  ASSERT_FALSE(ids.empty()) << before.out;
  std::string config = "disable:\n";
  for (const auto& id : ids) config += "  - " + id + "\n";
  put(file(".trainimg.yaml"), config);

  CliResult hidden = run("--format json");
  EXPECT_EQ(hidden.rc, 0) << hidden.out;
  auto h = nlohmann::json::parse(hidden.out);
  EXPECT_TRUE(h["findings"].empty()) << hidden.out;
  EXPECT_FALSE(h.contains("suppressed") && !h["suppressed"].empty()) << hidden.out;

  fs::path report = file("shown.json");
  CliResult shown = run("--format json --show-suppressed -o '" + report.string() + "'");
  EXPECT_EQ(shown.rc, 0) << shown.out;
  auto s = nlohmann::json::parse(slurp(report));
  ASSERT_TRUE(s.contains("suppressed")) << s.dump(2);
  EXPECT_FALSE(s["suppressed"].empty()) << s.dump(2);
  EXPECT_EQ(s["suppressed"][0]["suppressed"]["by"], "disable") << s.dump(2);
}

INSTANTIATE_TEST_SUITE_P(CheckingCommands, ReportFlags, ::testing::ValuesIn(cases()),
                         [](const ::testing::TestParamInfo<Case>& i) { return std::string(i.param.name); });

}  // namespace
