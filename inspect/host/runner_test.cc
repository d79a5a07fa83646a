// SPDX-License-Identifier: GPL-3.0-or-later
// ExecRunner runs real commands on this machine; ReplayRunner reads fixtures.
#include <gtest/gtest.h>

#include "inspect/host.h"
#include "inspect/host/test_support.h"

namespace trainimg::host {
namespace {

using namespace std::chrono_literals;

ProbeSpec exec_spec(std::vector<std::string> argv, bool nonzero_ok = false) {
  ProbeSpec s;
  s.id = "t";
  s.argv = std::move(argv);
  s.nonzero_ok = nonzero_ok;
  return s;
}

TEST(ExecRunner, CapturesStdoutAndExitCode) {
  auto r = ExecRunner().run(exec_spec({"sh", "-c", "echo out; echo err >&2; exit 0"}), 5s);
  EXPECT_EQ(r.status, ProbeStatus::Ok);
  EXPECT_EQ(r.output, "out\n");
  EXPECT_EQ(r.error, "err\n");
}

TEST(ExecRunner, AMissingToolIsAbsentNotAnError) {
  auto r = ExecRunner().run(exec_spec({"trainimg-no-such-tool-xyz"}), 5s);
  EXPECT_EQ(r.status, ProbeStatus::Absent);
  EXPECT_EQ(r.error, "command not found: trainimg-no-such-tool-xyz");
}

TEST(ExecRunner, UsesAFallbackPathOutsidePath) {
  ProbeSpec s = exec_spec({"trainimg-no-such-tool-xyz", "hello"});
  s.fallbacks = {"/nonexistent/x", "/bin/echo"};
  auto r = ExecRunner().run(s, 5s);
  EXPECT_EQ(r.status, ProbeStatus::Ok);
  EXPECT_EQ(r.output, "hello\n");
}

TEST(ExecRunner, NonZeroExitIsFailedWithStderr) {
  auto r = ExecRunner().run(exec_spec({"ls", "/nonexistent-trainimg"}), 5s);
  EXPECT_EQ(r.status, ProbeStatus::Failed);
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.error.find("No such file"), std::string::npos) << r.error;
}

TEST(ExecRunner, NonZeroWithAnAnswerIsOkWhenAllowed) {
  // systemctl is-active prints "inactive" and exits 3.
  auto r = ExecRunner().run(exec_spec({"sh", "-c", "echo inactive; exit 3"}, true), 5s);
  EXPECT_EQ(r.status, ProbeStatus::Ok);
  EXPECT_EQ(r.exit_code, 3);
}

TEST(ExecRunner, KillsAProbePastItsTimeout) {
  auto t0 = std::chrono::steady_clock::now();
  auto r = ExecRunner().run(exec_spec({"sh", "-c", "sleep 30 & sleep 30"}), 300ms);
  EXPECT_EQ(r.status, ProbeStatus::Timeout);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 5s);  // the whole process group died
}

TEST(ExecRunner, RunsWithCLocaleAndNoShell) {
  auto r = ExecRunner().run(exec_spec({"sh", "-c", "echo $LC_ALL"}), 5s);
  EXPECT_EQ(r.output, "C\n");
  // An argument is never re-parsed by a shell.
  auto q = ExecRunner().run(exec_spec({"echo", "a; rm -rf /tmp/x"}), 5s);
  EXPECT_EQ(q.output, "a; rm -rf /tmp/x\n");
}

TEST(ExecRunner, BuiltinsReadFilesDirectoriesAndLimits) {
  ProbeSpec f;
  f.kind = ProbeSpec::Kind::ReadFile;
  f.path = "/nonexistent/efa_installed_packages";
  EXPECT_EQ(ExecRunner().run(f, 1s).status, ProbeStatus::Absent);
  f.path = "/proc/self/status";
  EXPECT_EQ(ExecRunner().run(f, 1s).status, ProbeStatus::Ok);
  ProbeSpec d;
  d.kind = ProbeSpec::Kind::ListDir;
  d.path = std::string(TRAINIMG_SOURCE_DIR) + "/tests/fixtures/host/variants/connectx";
  auto listed = ExecRunner().run(d, 1s);
  EXPECT_EQ(listed.output, "infiniband.txt\n");
  ProbeSpec m;
  m.kind = ProbeSpec::Kind::Memlock;
  auto lim = ExecRunner().run(m, 1s);
  EXPECT_EQ(lim.status, ProbeStatus::Ok);
  EXPECT_FALSE(lim.output.empty());
}

TEST(ReplayRunnerOnSeedFixture, ReadsOkFailedAndAbsent) {
  ProbeSpec s;
  s.id = "uname-r.txt";
  auto ok = ReplayRunner(testing::fixture("p6-b200")).run(s, 1s);
  EXPECT_EQ(ok.status, ProbeStatus::Ok);
  EXPECT_EQ(ok.output, "7.0.0-1014-aws\n");
  s.id = "dev-gdrdrv.txt";
  auto failed = ReplayRunner(testing::fixture("variants/no-gdrdrv")).run(s, 1s);
  EXPECT_EQ(failed.status, ProbeStatus::Failed);
  EXPECT_EQ(failed.error, "ls: cannot access '/dev/gdrdrv': No such file or directory\n");
  s.id = "lfs-version.txt";
  EXPECT_EQ(ReplayRunner(testing::fixture("variants/no-gdrdrv")).run(s, 1s).status, ProbeStatus::Absent);
}

}  // namespace
}  // namespace trainimg::host
