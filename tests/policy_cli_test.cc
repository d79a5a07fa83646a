// SPDX-License-Identifier: GPL-3.0-or-later
// End-to-end: policy (.trainimg.yaml, ignores with expiry, baselines,
// --show-suppressed; docs/policy.md) through the trainimg binary, for lint,
// inspect (a dir: rootfs written here) and host check (the seed 000
// P6-B200 fixture and its efa-old variant). Every case runs in its own
// temporary directory, which holds a `.git` so that no config above it is
// read.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "tests/cli_test_util.h"

namespace {

namespace fs = std::filesystem;
using trainimg::testing::CliResult;
using trainimg::testing::put;
using trainimg::testing::slurp;
using trainimg::testing::TempDir;
using trainimg::testing::trainimg_in;

// Three errors (efa-apt-update, efa-container-flags, efa-ld-library-path)
// and one warning (efa-container-flags: no -g), all at 3:72.
const char* kDockerfile =
    "FROM nvcr.io/nvidia/pytorch:26.08-py3\n"
    "RUN cd /tmp && curl -fsSL -O https://efa-installer.amazonaws.com/aws-efa-installer-1.50.0.tar.gz \\\n"
    " && tar -xf aws-efa-installer-1.50.0.tar.gz && cd aws-efa-installer && ./efa_installer.sh -y\n";

class PolicyCli : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(tmp_.path().empty());
    fs::create_directories(tmp_.path() / "repo/.git");
    put(repo() / "Dockerfile", kDockerfile);
  }
  fs::path repo() const { return tmp_.path() / "repo"; }
  CliResult run(const std::string& args, const std::string& sub = "") {
    return trainimg_in((repo() / sub).string(), args);
  }
  TempDir tmp_{"trainimg-policy-cli"};
};

TEST_F(PolicyCli, WithoutAConfigTheReportIsUnchanged) {
  CliResult r = run("lint Dockerfile");
  EXPECT_EQ(r.rc, 1) << r.out;
  EXPECT_NE(r.out.find("3 errors, 1 warning, 0 notes\n"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("suppressed"), std::string::npos) << r.out;
}

TEST_F(PolicyCli, TheNearestConfigInAParentIsReadButNotOneAboveTheRepository) {
  fs::create_directories(repo() / "docker/sub");
  // Above the repository's root (.git): never read, or this would be exit 2.
  put(tmp_.path() / ".trainimg.yaml", "not-a-key: 1\n");
  CliResult none = run("lint ../../Dockerfile", "docker/sub");
  EXPECT_EQ(none.rc, 1) << none.out;
  EXPECT_NE(none.out.find("3 errors, 1 warning"), std::string::npos) << none.out;
  put(repo() / ".trainimg.yaml", "disable: [efa-apt-update, efa-ld-library-path]\n");
  CliResult found = run("lint ../../Dockerfile", "docker/sub");
  EXPECT_EQ(found.rc, 1) << found.out;
  EXPECT_NE(found.out.find("1 error, 1 warning, 0 notes\n"), std::string::npos) << found.out;
  EXPECT_EQ(found.out.find("[efa-apt-update]"), std::string::npos) << found.out;
}

TEST_F(PolicyCli, ConfigFlagNamesAFileAndNoConfigReadsNone) {
  put(repo() / ".trainimg.yaml", "disable: [efa-apt-update]\n");
  put(tmp_.path() / "strict.yaml", "disable: [efa-ld-library-path, efa-apt-update, efa-container-flags]\n");
  CliResult other = run("lint Dockerfile --config ../strict.yaml");
  EXPECT_EQ(other.rc, 0) << other.out;
  EXPECT_NE(other.out.find("0 errors, 0 warnings, 0 notes\n"), std::string::npos) << other.out;
  CliResult none = run("lint Dockerfile --no-config");
  EXPECT_EQ(none.rc, 1) << none.out;
  EXPECT_NE(none.out.find("3 errors, 1 warning"), std::string::npos) << none.out;
  CliResult near = run("lint Dockerfile");
  EXPECT_NE(near.out.find("2 errors, 1 warning"), std::string::npos) << near.out;
}

TEST_F(PolicyCli, AnUnknownKeyIsExitTwoAtItsPositionWithASuggestionAndNoReport) {
  put(repo() / ".trainimg.yaml", "fail-on: error\ndisabel: [efa-apt-update]\n");
  CliResult r = run("lint Dockerfile");
  EXPECT_EQ(r.rc, 2) << r.out;
  EXPECT_EQ(r.out,
            ".trainimg.yaml:2:1: error: unknown key 'disabel' (did you mean 'disable'?)\n"
            "disabel: [efa-apt-update]\n"
            "^~~~~~~\n"
            "hint: the keys are disable, severity, exclude-paths, fail-on, expect, ngc-bases, ignore "
            "(docs/policy.md)\n");
  put(repo() / ".trainimg.yaml", "severity:\n  efa-apt-updte: warning\n");
  CliResult id = run("lint Dockerfile");
  EXPECT_EQ(id.rc, 2) << id.out;
  EXPECT_EQ(id.out.substr(0, id.out.find('\n')),
            ".trainimg.yaml:2:3: error: unknown rule id 'efa-apt-updte' (did you mean 'efa-apt-update'?)");
  put(repo() / ".trainimg.yaml", "ignore:\n  - {id: efa-apt-update, until: 2026-13-01, reason: r}\n");
  CliResult date = run("lint Dockerfile");
  EXPECT_EQ(date.rc, 2) << date.out;
  EXPECT_EQ(date.out.substr(0, date.out.find('\n')),
            ".trainimg.yaml:2:33: error: until: '2026-13-01' is not a date YYYY-MM-DD");
}

TEST_F(PolicyCli, SeverityOverridesAndFailOnChangeTheExitCodeAndTheFlagWins) {
  put(repo() / ".trainimg.yaml",
      "severity:\n  efa-apt-update: warning\n  efa-container-flags: warning\n  efa-ld-library-path: info\n");
  CliResult r = run("lint Dockerfile");
  EXPECT_EQ(r.rc, 0) << r.out;
  EXPECT_NE(r.out.find("0 errors, 3 warnings, 1 note\n"), std::string::npos) << r.out;
  put(repo() / ".trainimg.yaml",
      "fail-on: warning\nseverity:\n  efa-apt-update: warning\n  efa-container-flags: warning\n"
      "  efa-ld-library-path: info\n");
  EXPECT_EQ(run("lint Dockerfile").rc, 1);
  EXPECT_EQ(run("lint Dockerfile --fail-on error").rc, 0);
}

TEST_F(PolicyCli, ExcludedPathsAreNotLintedAndShowSuppressedSaysWhy) {
  put(repo() / "vendor/x/Dockerfile", kDockerfile);
  put(repo() / ".trainimg.yaml", "exclude-paths: [vendor]\n");
  CliResult r = run("lint . --format json --show-suppressed");
  EXPECT_EQ(r.rc, 1) << r.out;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["inputs"], nlohmann::json::array({"./Dockerfile"})) << r.out;
  ASSERT_EQ(j["suppressed"].size(), 1u) << r.out;
  EXPECT_EQ(j["suppressed"][0]["file"], "./vendor/x/Dockerfile");
  EXPECT_EQ(j["suppressed"][0]["suppressed"]["by"], "exclude-paths");
  EXPECT_EQ(j["suppressed"][0]["suppressed"]["where"], ".trainimg.yaml:1:17");
  // Named on the command line (pre-commit passes file names): excluded too.
  CliResult named = run("lint vendor/x/Dockerfile");
  EXPECT_EQ(named.rc, 0) << named.out;
  EXPECT_EQ(named.out, "0 errors, 0 warnings, 0 notes\n");
}

TEST_F(PolicyCli, AnIgnoreHidesItsFindingAndShowSuppressedGivesTheReason) {
  put(repo() / ".trainimg.yaml",
      "ignore:\n"
      "  - id: efa-apt-update\n"
      "    path: Dockerfile\n"
      "    until: 2999-12-31\n"
      "    reason: the base image refreshes the lists (TICKET-12)\n");
  CliResult quiet = run("lint Dockerfile");
  EXPECT_EQ(quiet.out.find("efa-apt-update"), std::string::npos) << quiet.out;
  EXPECT_NE(quiet.out.find("2 errors, 1 warning"), std::string::npos) << quiet.out;
  CliResult shown = run("lint Dockerfile --show-suppressed");
  EXPECT_NE(
      shown.out.find("suppressed:\n"
                     "  Dockerfile:3:72: error: efa_installer.sh runs without apt-get update earlier in the "
                     "same RUN [efa-apt-update]\n"
                     "    by ignore (.trainimg.yaml:2:5): the base image refreshes the lists (TICKET-12) "
                     "(until 2999-12-31)\n"),
      std::string::npos)
      << shown.out;
  // An ignore for another path hides nothing.
  put(repo() / ".trainimg.yaml", "ignore:\n  - {id: efa-apt-update, path: 'other/*', reason: r}\n");
  EXPECT_NE(run("lint Dockerfile").out.find("[efa-apt-update]"), std::string::npos);
}

TEST_F(PolicyCli, AnExpiredIgnoreReportsItsFindingAgainAndWarnsAtTheEntry) {
  put(repo() / ".trainimg.yaml",
      "disable: [efa-ld-library-path, efa-container-flags]\n"
      "ignore:\n"
      "  - id: efa-apt-update\n"
      "    until: 2020-01-31\n"
      "    reason: waiting for installer 1.51\n");
  CliResult r = run("lint Dockerfile");
  EXPECT_EQ(r.rc, 1) << r.out;
  EXPECT_NE(r.out.find("[efa-apt-update]"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(".trainimg.yaml:3:5: warning: the ignore of efa-apt-update expired on 2020-01-31 "
                       "(reason: waiting for installer 1.51): its findings are reported again "
                       "[policy-ignore-expired]\n"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("1 error, 1 warning, 0 notes\n"), std::string::npos) << r.out;
  CliResult sarif = run("lint Dockerfile --format sarif");
  auto j = nlohmann::json::parse(sarif.out);
  bool described = false;
  for (const auto& rule : j["runs"][0]["tool"]["driver"]["rules"])
    described |= rule["id"] == "policy-ignore-expired";
  EXPECT_TRUE(described) << sarif.out;
}

TEST_F(PolicyCli, ABaselineSurvivesALineShiftAndOnlyANewFindingFails) {
  CliResult w = run("lint Dockerfile --write-baseline base.json");
  EXPECT_EQ(w.rc, 0) << w.out;
  EXPECT_NE(w.out.find("trainimg: wrote 4 findings to the baseline base.json\n"), std::string::npos) << w.out;
  auto base = nlohmann::json::parse(slurp(repo() / "base.json"));
  EXPECT_EQ(base["schema"], "trainimg.baseline/v1");
  ASSERT_EQ(base["findings"].size(), 4u);
  EXPECT_EQ(base["findings"][0]["rule"], "efa-apt-update");
  EXPECT_EQ(base["findings"][0]["file"], "Dockerfile");
  EXPECT_EQ(base["findings"][0]["fingerprint"].get<std::string>().size(), 16u);

  // Three lines inserted above: every finding moves to line 6, none is new.
  std::string shifted = kDockerfile;
  shifted.insert(shifted.find('\n') + 1, "# the EFA stack\nARG UNUSED=1\n\n");
  put(repo() / "Dockerfile", shifted);
  CliResult same = run("lint Dockerfile --baseline base.json");
  EXPECT_EQ(same.rc, 0) << same.out;
  EXPECT_NE(
      same.out.find("baseline base.json: 0 new, 4 unchanged, 0 absent\n0 errors, 0 warnings, 0 notes\n"),
      std::string::npos)
      << same.out;

  // A new error (a second installer RUN) fails; the old ones stay accepted.
  put(repo() / "Dockerfile", shifted + "RUN ./efa_installer.sh -y -g\n");
  CliResult fresh = run("lint Dockerfile --baseline base.json");
  EXPECT_EQ(fresh.rc, 1) << fresh.out;
  EXPECT_NE(fresh.out.find("Dockerfile:7:5: error:"), std::string::npos) << fresh.out;
  EXPECT_EQ(fresh.out.find("Dockerfile:6:72"), std::string::npos) << fresh.out;

  // SARIF: new, unchanged and, for a fixed finding, absent.
  put(repo() / ".trainimg.yaml", "disable: [efa-ld-library-path]\n");
  CliResult sarif = run("lint Dockerfile --baseline base.json --format sarif");
  auto j = nlohmann::json::parse(sarif.out);
  std::map<std::string, int> states;
  for (const auto& res : j["runs"][0]["results"]) states[res["baselineState"].get<std::string>()]++;
  EXPECT_GE(states["new"], 1) << sarif.out;
  EXPECT_EQ(states["unchanged"], 3) << sarif.out;
  EXPECT_EQ(states["absent"], 1) << sarif.out;
}

TEST_F(PolicyCli, BaselineAndWriteBaselineTogetherAreRefused) {
  run("lint Dockerfile --write-baseline base.json");
  CliResult r = run("lint Dockerfile --baseline base.json --write-baseline other.json");
  EXPECT_EQ(r.rc, 2) << r.out;
  EXPECT_FALSE(fs::exists(repo() / "other.json"));
}

// --- inspect ---

// A rootfs with the EFA installer's manifest and nothing else: the
// libfabric it promises is missing (efa-stack-incomplete), and the final
// environment sets neither NCCL_NET_PLUGIN nor LD_LIBRARY_PATH.
void make_rootfs(const fs::path& root) {
  put(root / "opt/amazon/efa_installed_packages", "# EFA installer version: 1.50.0\n");
  fs::create_directories(root / "usr/lib");
}

TEST_F(PolicyCli, InspectTakesDisableIgnoreAndSeverityFromTheConfig) {
  make_rootfs(repo() / "rootfs");
  CliResult plain = run("inspect dir:rootfs");
  EXPECT_EQ(plain.rc, 1) << plain.out;
  EXPECT_NE(plain.out.find("3 errors, 0 warnings, 0 notes\n"), std::string::npos) << plain.out;
  put(repo() / ".trainimg.yaml",
      "disable: [nccl-net-plugin]\n"
      "severity: {efa-stack-incomplete: warning}\n"
      "ignore:\n"
      "  - id: ld-library-path-order\n"
      "    path: /opt/amazon/*\n"
      "    reason: never matches (this finding has no image path)\n"
      "  - id: ld-library-path-order\n"
      "    path: dir:rootfs\n"
      "    reason: the launcher sets LD_LIBRARY_PATH\n");
  CliResult r = run("inspect dir:rootfs --show-suppressed --format json");
  EXPECT_EQ(r.rc, 0) << r.out;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["summary"]["errors"], 0) << r.out;
  EXPECT_EQ(j["summary"]["warnings"], 1) << r.out;
  ASSERT_EQ(j["suppressed"].size(), 2u) << r.out;
  EXPECT_EQ(j["suppressed"][0]["rule"], "nccl-net-plugin");
  EXPECT_EQ(j["suppressed"][0]["suppressed"]["by"], "disable");
  EXPECT_EQ(j["suppressed"][1]["rule"], "ld-library-path-order");
  EXPECT_EQ(j["suppressed"][1]["suppressed"]["reason"], "the launcher sets LD_LIBRARY_PATH");
  EXPECT_EQ(j["suppressed"][1]["suppressed"]["where"], ".trainimg.yaml:7:5");
  // --fail-on warning on the command line.
  EXPECT_EQ(run("inspect dir:rootfs --fail-on warning").rc, 1);
}

TEST_F(PolicyCli, InspectExpiredIgnoreAndBaseline) {
  make_rootfs(repo() / "rootfs");
  put(repo() / ".trainimg.yaml",
      "ignore: [{id: nccl-net-plugin, until: 2001-02-03, reason: plugin chosen at run time}]\n");
  CliResult r = run("inspect dir:rootfs");
  EXPECT_NE(r.out.find("[nccl-net-plugin]"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(".trainimg.yaml:1:10: warning: the ignore of nccl-net-plugin expired on 2001-02-03"),
            std::string::npos)
      << r.out;
  CliResult w = run("inspect dir:rootfs --no-config --write-baseline inspect-base.json");
  EXPECT_EQ(w.rc, 0) << w.out;
  EXPECT_NE(w.out.find("wrote 3 findings"), std::string::npos) << w.out;
  CliResult same = run("inspect dir:rootfs --no-config --baseline inspect-base.json --format sarif");
  EXPECT_EQ(same.rc, 0) << same.out;
  auto j = nlohmann::json::parse(same.out);
  ASSERT_EQ(j["runs"][0]["results"].size(), 3u) << same.out;
  for (const auto& res : j["runs"][0]["results"]) EXPECT_EQ(res["baselineState"], "unchanged") << same.out;
  // The installer's libfabric arrives: efa-stack-incomplete is absent now.
  put(repo() / "rootfs/opt/amazon/efa/lib/libfabric.so.1", "not an ELF file\n");
  CliResult fixed = run("inspect dir:rootfs --no-config --baseline inspect-base.json --format json");
  auto k = nlohmann::json::parse(fixed.out);
  EXPECT_EQ(k["baseline"]["file"], "inspect-base.json") << fixed.out;
  ASSERT_EQ(k["baseline"]["absent"].size(), 1u) << fixed.out;
  EXPECT_EQ(k["baseline"]["absent"][0]["rule"], "efa-stack-incomplete") << fixed.out;
}

// --- host check ---

class PolicyHostCli : public PolicyCli {
 protected:
  void SetUp() override {
    PolicyCli::SetUp();
    const fs::path fx = fs::path(TRAINIMG_SOURCE_DIR) / "tests/fixtures/host";
    fs::create_directories(repo() / "bundle");
    auto opts = fs::copy_options::overwrite_existing | fs::copy_options::recursive;
    fs::copy(fx / "p6-b200", repo() / "bundle", opts);
    fs::copy(fx / "variants/efa-old", repo() / "bundle", opts);
    ASSERT_EQ(run("host capture --from bundle -o old.json").rc, 0);
    ASSERT_EQ(run("host capture --from " + (fx / "p6-b200").string() + " -o p6.json").rc, 0);
  }
  const std::string kExpect =
      "--expect gpus=8,efas=8,gpu-model=B200,efa-driver'>='3.3.0,kernel=7.0.0-1014-aws";
};

TEST_F(PolicyHostCli, AnIgnoreWithAReasonPassesTheNodeAndExpiresLater) {
  CliResult plain = run("host check old.json " + kExpect);
  EXPECT_EQ(plain.rc, 1) << plain.out;
  EXPECT_NE(plain.out.find("old.json: error: EFA driver 3.2.1 is below the minimum 3.3.0 [efa-driver]"),
            std::string::npos)
      << plain.out;
  put(repo() / ".trainimg.yaml",
      "ignore:\n  - id: efa-driver\n    path: old.json\n    until: 2999-01-01\n    reason: DLAMI upgrade "
      "booked\n");
  CliResult ignored = run("host check old.json --show-suppressed " + kExpect);
  EXPECT_EQ(ignored.rc, 0) << ignored.out;
  EXPECT_NE(ignored.out.find("    by ignore (.trainimg.yaml:2:5): DLAMI upgrade booked (until 2999-01-01)\n"),
            std::string::npos)
      << ignored.out;
  put(repo() / ".trainimg.yaml",
      "ignore:\n  - id: efa-driver\n    until: 2021-01-01\n    reason: DLAMI upgrade booked\n");
  CliResult expired = run("host check old.json " + kExpect);
  EXPECT_EQ(expired.rc, 1) << expired.out;
  EXPECT_NE(expired.out.find("[policy-ignore-expired]"), std::string::npos) << expired.out;
  EXPECT_NE(expired.out.find("[efa-driver]"), std::string::npos) << expired.out;
}

TEST_F(PolicyHostCli, BaselineTellsAcceptedFindingsFromAReferenceProfileBySchema) {
  // trainimg.host/v1: the reference node, as before.
  CliResult drift = run("host check old.json --baseline p6.json");
  EXPECT_EQ(drift.rc, 1) << drift.out;
  EXPECT_NE(drift.out.find("EFA driver 3.2.1 differs from the baseline node p6-node-001 (3.3.0)"),
            std::string::npos)
      << drift.out;
  // trainimg.baseline/v1: the accepted findings.
  CliResult w = run("host check old.json --write-baseline accepted.json " + kExpect);
  EXPECT_EQ(w.rc, 0) << w.out;
  CliResult same = run("host check old.json --baseline accepted.json " + kExpect);
  EXPECT_EQ(same.rc, 0) << same.out;
  EXPECT_NE(same.out.find("baseline accepted.json: 0 new, 1 unchanged, 0 absent\n"), std::string::npos)
      << same.out;
  CliResult sarif = run("host check p6.json --baseline accepted.json --format sarif " + kExpect);
  EXPECT_EQ(sarif.rc, 0) << sarif.out;
  auto j = nlohmann::json::parse(sarif.out);
  ASSERT_EQ(j["runs"][0]["results"].size(), 1u) << sarif.out;
  EXPECT_EQ(j["runs"][0]["results"][0]["baselineState"], "absent");
  EXPECT_EQ(j["runs"][0]["results"][0]["ruleId"], "efa-driver");
}

TEST_F(PolicyHostCli, FleetCheckAppliesTheConfigToEveryNodeBeforeJudgingIt) {
  fs::create_directories(repo() / "fleet");
  fs::copy_file(repo() / "p6.json", repo() / "fleet/n1.json");
  fs::copy_file(repo() / "p6.json", repo() / "fleet/n2.json");
  fs::copy_file(repo() / "old.json", repo() / "fleet/n3.json");
  CliResult plain = run("fleet check --profiles fleet --expect efa-driver'>='3.3.0");
  EXPECT_EQ(plain.rc, 1) << plain.out;
  EXPECT_NE(plain.out.find("n3: error: EFA driver 3.2.1 is below the minimum 3.3.0 [efa-driver]"),
            std::string::npos)
      << plain.out;
  put(repo() / ".trainimg.yaml",
      "ignore:\n"
      "  - {id: efa-driver, path: n3, reason: DLAMI upgrade booked}\n"
      "  - {id: fleet-drift, path: n3, until: 2020-01-01, reason: DLAMI upgrade booked}\n");
  CliResult r = run("fleet check --profiles fleet --expect efa-driver'>='3.3.0");
  EXPECT_EQ(r.rc, 1) << r.out;
  EXPECT_EQ(r.out.find("[efa-driver]"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("[fleet-drift]"), std::string::npos) << r.out;
  // The expired ignore is said once, not once per node.
  EXPECT_NE(r.out.find(".trainimg.yaml:3:5: warning: the ignore of fleet-drift in n3 expired on 2020-01-01"),
            std::string::npos)
      << r.out;
  EXPECT_EQ(r.out.find("expired on"), r.out.rfind("expired on")) << r.out;
  EXPECT_EQ(run("fleet check --profiles fleet --no-config --expect efa-driver'>='3.3.0").rc, 1);
}

TEST_F(PolicyHostCli, DisableInTheConfigAppliesToCheckNcclLog) {
  std::string log =
      (fs::path(TRAINIMG_SOURCE_DIR) / "tests/fixtures/host/nccl/log-socket-fallback.txt").string();
  EXPECT_EQ(run("check nccl-log " + log).rc, 1);
  put(repo() / ".trainimg.yaml", "disable: [nccl-log]\n");
  CliResult r = run("check nccl-log " + log + " --show-suppressed");
  EXPECT_EQ(r.rc, 0) << r.out;
  EXPECT_NE(r.out.find("by disable (.trainimg.yaml:1:11): rule disabled"), std::string::npos) << r.out;
}

}  // namespace
