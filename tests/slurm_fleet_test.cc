// SPDX-License-Identifier: GPL-3.0-or-later
// `trainimg fleet check`, the Slurm node gate and the Prolog on a real Slurm
// cluster: .ci/start-slurm.sh (one slurmctld, slurmd -N node1..node3 on this
// machine; its state file names SLURM_CONF). Each node replays its own
// recorded bundle through TRAINIMG_HOST_BUNDLE_DIR: node1 the seed 000
// P6-B200 node, node2 with memlock 8192, node3 with an upgraded kernel
// (tests/fixtures/host, written from the seeds: a faithful local fixture
// for nodes that cannot exist here). Skipped without the cluster, a failure
// under TRAINIMG_CI=1.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>

#include "tests/cli_test_util.h"

namespace {

namespace fs = std::filesystem;

using CmdRun = trainimg::testing::CliResult;
using trainimg::testing::sh;

using trainimg::testing::slurp;

const char* kP6 = "gpus=8,efas=8,gpu-model=B200,efa-driver'>='3.3.0,kernel=7.0.0-1014-aws";

class SlurmFleet : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    const char* st = std::getenv("TRAINIMG_SLURM_STATE");
    std::string state = slurp(st ? st : "/tmp/trainimg-ci-slurm.env");
    std::istringstream in(state);
    for (std::string l; std::getline(in, l);) {
      if (l.starts_with("SLURM_CONF=")) conf_ = l.substr(11);
      if (l.starts_with("TRAINIMG_SLURM_DIR=")) dir_ = l.substr(19);
    }
    if (conf_.empty()) return;
    bundles_ = fs::temp_directory_path() / ("trainimg-fleet-" + std::to_string(::getpid()));
    const fs::path fx = fs::path(TRAINIMG_SOURCE_DIR) / "tests/fixtures/host";
    auto make = [&](const std::string& node, const std::string& variant) {
      fs::path d = bundles_ / node;
      fs::create_directories(d);
      fs::copy(fx / "p6-b200", d, fs::copy_options::overwrite_existing | fs::copy_options::recursive);
      if (!variant.empty())
        fs::copy(fx / "variants" / variant, d,
                 fs::copy_options::overwrite_existing | fs::copy_options::recursive);
    };
    make("node1", "");
    make("node2", "memlock-limited");
    make("node3", "kernel-upgraded");
  }
  static void TearDownTestSuite() {
    if (!bundles_.empty()) fs::remove_all(bundles_);
  }
  void SetUp() override {
    if (conf_.empty()) {
      if (std::getenv("TRAINIMG_CI")) FAIL() << "no Slurm cluster: .ci/start-slurm.sh did not run";
      GTEST_SKIP() << "no Slurm cluster (.ci/start-slurm.sh)";
    }
    // Every test starts with three idle nodes.
    slurm("scontrol update NodeName=node[1-3] State=RESUME >/dev/null 2>&1");
    wait_idle(3);
  }
  std::string env() const {
    return "SLURM_CONF=" + conf_ + " TRAINIMG_HOST_BUNDLE_DIR=" + bundles_.string() + " ";
  }
  CmdRun slurm(const std::string& cmd) const { return sh("SLURM_CONF=" + conf_ + " " + cmd + " 2>&1"); }
  CmdRun trainimg(const std::string& args) const { return sh(env() + TRAINIMG_BIN + " " + args + " 2>&1"); }
  void wait_idle(int n) const {
    for (int i = 0; i < 100; ++i) {
      CmdRun r = slurm("sinfo -h -N -o %T");
      int idle = 0;
      std::istringstream in(r.out);
      for (std::string l; std::getline(in, l);) idle += l == "idle";
      if (idle >= n) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(300));
    }
  }
  std::string reason(const std::string& node) const {
    std::string s = slurm("sinfo -h -N -n " + node + " -o %E").out;
    while (!s.empty() && s.back() == '\n') s.pop_back();
    return s;
  }

  static inline std::string conf_, dir_;
  static inline fs::path bundles_;
};

// One ctest test for the whole cluster (ctest runs tests in parallel; these
// share three nodes): the scenarios run in order, each from three idle nodes.
class SlurmFleetScenarios : public SlurmFleet {
 protected:
  void FleetCheckThroughSrunTableJsonJunit();
  void DrainNamesTheRuleAndKeepsAnAdministratorsReason();
  void PrologDrainsTheFailingNodeAndTheJobRunsElsewhere();
  void ANodeWhoseSlurmdIsStoppedIsReportedNotWaitedOn();
  void reset() {
    fs::remove(fs::path(dir_) / "prolog.d/gate");
    slurm("scontrol update NodeName=node[1-3] State=RESUME >/dev/null 2>&1");
    wait_idle(3);
  }
};

void SlurmFleetScenarios::FleetCheckThroughSrunTableJsonJunit() {
  auto t0 = std::chrono::steady_clock::now();
  CmdRun text = trainimg("fleet check --nodes node[1-3] --timeout 20 --expect " + std::string(kP6));
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::cerr << "fleet check on the 3-node cluster: " << secs << " s\n";
  EXPECT_EQ(text.rc, 1) << text.out;
  EXPECT_NE(text.out.find(
                "node3: error: node3 runs kernel 7.0.0-1020-aws, 2 nodes run 7.0.0-1014-aws [fleet-drift]"),
            std::string::npos)
      << text.out;
  EXPECT_NE(text.out.find("node2: error: memlock limit is 8192 KiB, expected unlimited [memlock]"),
            std::string::npos)
      << text.out;
  EXPECT_NE(text.out.find("\nnode1  ok     ok"), std::string::npos)
      << text.out;  // the healthy node's row, last
  EXPECT_NE(text.out.find("3 nodes, 2 failing"), std::string::npos) << text.out;

  CmdRun json = trainimg("fleet check -w node[1-3] --timeout 20 --format json --expect " + std::string(kP6));
  EXPECT_EQ(json.rc, 1);
  auto j = nlohmann::json::parse(json.out.substr(json.out.find('{')));
  EXPECT_EQ(j["schema"], "trainimg.fleet/v1");
  ASSERT_EQ(j["nodes"].size(), 3u);
  EXPECT_EQ(j["nodes"][0]["node"], "node1");
  EXPECT_EQ(j["nodes"][0]["state"], "ok");
  for (const auto& f : j["nodes"][0]["findings"]) EXPECT_EQ(f["severity"], "info") << f.dump();
  EXPECT_EQ(j["nodes"][0]["profile_digest"].get<std::string>().substr(0, 7), "sha256:");
  bool memlock = false;
  for (const auto& f : j["nodes"][1]["findings"]) memlock = memlock || f["rule"] == "memlock";
  EXPECT_TRUE(memlock) << j["nodes"][1].dump(1);
  EXPECT_NE(json.out.find("\"fact\": \"kernel\""), std::string::npos);

  CmdRun junit =
      trainimg("fleet check -w node[1-3] --timeout 20 --format junit --expect " + std::string(kP6));
  EXPECT_NE(junit.out.find("<testcase classname=\"trainimg.fleet.node2\" name=\"memlock\">\n      <failure"),
            std::string::npos)
      << junit.out;
  EXPECT_NE(junit.out.find("<testcase classname=\"trainimg.fleet.node1\" name=\"memlock\"/>"),
            std::string::npos);
  // The node list from the partition, and from all of `sinfo -N`.
  for (const char* sel : {"--partition debug ", ""}) {
    CmdRun all = trainimg(std::string("fleet check ") + sel + "--timeout 20 --format json --expect " + kP6);
    auto ja = nlohmann::json::parse(all.out.substr(all.out.find('{')));
    EXPECT_EQ(ja["nodes"].size(), 3u) << sel << all.out;
  }
  // Near miss: the healthy node alone passes.
  EXPECT_EQ(trainimg("fleet check -w node1 --timeout 20 --expect " + std::string(kP6)).rc, 0);
}

void SlurmFleetScenarios::DrainNamesTheRuleAndKeepsAnAdministratorsReason() {
  EXPECT_EQ(trainimg("fleet check -w node[1-2] --timeout 20 --expect " + std::string(kP6)).rc, 1);
  EXPECT_EQ(reason("node2"), "none");  // never drains without --drain
  CmdRun r = trainimg("fleet check -w node[1-2] --timeout 20 --drain --expect " + std::string(kP6));
  EXPECT_EQ(r.rc, 1) << r.out;
  CmdRun sr = slurm("sinfo -R -h -o '%N|%E'");
  EXPECT_NE(sr.out.find("node2|trainimg: memlock: memlock limit is 8192 KiB, expected unlimited"),
            std::string::npos)
      << sr.out;
  EXPECT_EQ(sr.out.find("node1|"), std::string::npos) << sr.out;

  // The gate as HealthCheckProgram on node3 drained by an administrator:
  // it fails (kernel) but keeps the admin's reason.
  slurm("scontrol update NodeName=node3 State=DRAIN Reason='hw ticket 42'");
  CmdRun gate = sh(env() + "SLURMD_NODENAME=node3 TRAINIMG_HOST_PROFILE=/nonexistent " + TRAINIMG_BIN +
                   " host check --live --slurm --drain --expect kernel=7.0.0-1014-aws 2>&1");
  EXPECT_EQ(gate.rc, 1) << gate.out;
  EXPECT_NE(gate.out.find(
                "trainimg: kernel-changed: running kernel 7.0.0-1020-aws ≠ the AMI kernel 7.0.0-1014-aws"),
            std::string::npos)
      << gate.out;
  EXPECT_NE(gate.out.find("did not drain node3: kept the administrator's reason \"hw ticket 42\""),
            std::string::npos)
      << gate.out;
  EXPECT_EQ(reason("node3"), "hw ticket 42");

  // Once node2's failure is gone, the gate resumes it (trainimg drained it).
  fs::copy_file(fs::path(TRAINIMG_SOURCE_DIR) / "tests/fixtures/host/p6-b200/ulimit-l.txt",
                bundles_ / "node2/ulimit-l.txt", fs::copy_options::overwrite_existing);
  CmdRun ok = sh(env() + "SLURMD_NODENAME=node2 TRAINIMG_HOST_PROFILE=/nonexistent " + TRAINIMG_BIN +
                 " host check --live --slurm --drain --expect memlock=yes 2>&1");
  EXPECT_EQ(ok.rc, 0) << ok.out;
  EXPECT_NE(ok.out.find("resumed node2"), std::string::npos) << ok.out;
  EXPECT_EQ(reason("node2"), "none");
  // …but never an administrator's drain.
  EXPECT_EQ(sh(env() + "SLURMD_NODENAME=node3 TRAINIMG_HOST_PROFILE=/nonexistent " + TRAINIMG_BIN +
               " host check --live --slurm --drain --expect memlock=yes 2>&1")
                .rc,
            0);
  EXPECT_EQ(reason("node3"), "hw ticket 42");
  fs::copy_file(fs::path(TRAINIMG_SOURCE_DIR) / "tests/fixtures/host/variants/memlock-limited/ulimit-l.txt",
                bundles_ / "node2/ulimit-l.txt", fs::copy_options::overwrite_existing);
}

void SlurmFleetScenarios::PrologDrainsTheFailingNodeAndTheJobRunsElsewhere() {
  // The site's prolog wrapper (docs/slurm.md): a Prolog gets only SLURM_*
  // variables, so it sets PATH, SLURM_CONF and the bundle directory itself.
  fs::path gate = fs::path(dir_) / "prolog.d/gate";
  {
    std::ofstream g(gate);
    g << "#!/bin/sh\nexport PATH=/usr/sbin:/usr/bin:/sbin:/bin SLURM_CONF=" << conf_
      << " TRAINIMG_HOST_BUNDLE_DIR=" << bundles_.string() << " TRAINIMG_HOST_PROFILE=/nonexistent\n"
      << "exec " << TRAINIMG_BIN << " host check --live --slurm --drain --expect memlock=yes 2>>" << dir_
      << "/prolog.$SLURMD_NODENAME.log\n";
  }
  fs::permissions(gate, fs::perms::owner_all | fs::perms::group_read | fs::perms::others_read);
  CmdRun fail = slurm("srun -N1 -w node2 --immediate=20 -t 1 true");
  EXPECT_NE(fail.rc, 0) << fail.out;
  std::string why;
  for (int i = 0; i < 30 && why.find("drain") == std::string::npos; ++i) {
    why = slurm("sinfo -h -N -n node2 -o '%T|%E'").out;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  EXPECT_NE(why.find("drain"), std::string::npos) << why;
  EXPECT_NE(why.find("trainimg: memlock: memlock limit is 8192 KiB, expected unlimited"), std::string::npos)
      << why;
  EXPECT_NE(slurp(fs::path(dir_) / "prolog.node2.log").find("trainimg: memlock:"), std::string::npos);
  // The next job lands on a healthy node and runs.
  CmdRun ok = slurm("srun -N1 --immediate=20 -t 1 sh -c 'echo ran on $SLURMD_NODENAME'");
  EXPECT_EQ(ok.rc, 0) << ok.out;
  EXPECT_EQ(ok.out.find("ran on node2"), std::string::npos) << ok.out;
  EXPECT_NE(ok.out.find("ran on node"), std::string::npos) << ok.out;
  fs::remove(gate);
}

void SlurmFleetScenarios::ANodeWhoseSlurmdIsStoppedIsReportedNotWaitedOn() {
  std::string pidfile = dir_ + "/slurmd.node3.pid";
  pid_t pid = std::stoi(slurp(pidfile));
  ASSERT_EQ(::kill(pid, SIGTERM), 0);
  for (int i = 0; i < 50 && ::kill(pid, 0) == 0; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  auto t0 = std::chrono::steady_clock::now();
  CmdRun r = trainimg("fleet check -w node[1-3] --timeout 8 --format json");
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_LT(secs, 30) << r.out;
  EXPECT_EQ(r.rc, 1) << r.out;
  auto j = nlohmann::json::parse(r.out.substr(r.out.find('{')));
  EXPECT_EQ(j["nodes"][2]["node"], "node3");
  EXPECT_EQ(j["nodes"][2]["state"], "node-unreachable") << j["nodes"][2].dump(1);
  EXPECT_EQ(j["nodes"][2]["findings"][0]["rule"], "node-unreachable");
  EXPECT_EQ(j["nodes"][0]["state"], "ok");
  // Bring node3 back for the other tests.
  ASSERT_EQ(slurm("/usr/sbin/slurmd -N node3").rc, 0);
  slurm("scontrol update NodeName=node3 State=RESUME");
  wait_idle(3);
}

TEST_F(SlurmFleetScenarios, FleetCheckDrainPrologAndDeadNodeOnARealCluster) {
  {
    SCOPED_TRACE("FleetCheckThroughSrunTableJsonJunit");
    FleetCheckThroughSrunTableJsonJunit();
  }
  reset();
  {
    SCOPED_TRACE("DrainNamesTheRuleAndKeepsAnAdministratorsReason");
    DrainNamesTheRuleAndKeepsAnAdministratorsReason();
  }
  reset();
  {
    SCOPED_TRACE("PrologDrainsTheFailingNodeAndTheJobRunsElsewhere");
    PrologDrainsTheFailingNodeAndTheJobRunsElsewhere();
  }
  reset();
  {
    SCOPED_TRACE("ANodeWhoseSlurmdIsStoppedIsReportedNotWaitedOn");
    ANodeWhoseSlurmdIsStoppedIsReportedNotWaitedOn();
  }
  reset();
}

}  // namespace
