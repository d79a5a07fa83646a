// SPDX-License-Identifier: GPL-3.0-or-later
// Issue 13 "Host checks": an input that was not captured (probe absent) is
// "cannot tell" (an info finding), not a failure, unless --strict or an
// --expect key names the check; a probe that ran and failed is judged; the
// GDS/Lustre checks apply only where the node uses them.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "inspect/host/test_support.h"

namespace trainimg::host {
namespace {
using ::testing::ElementsAre;
using ::testing::IsEmpty;
using namespace trainimg::host::testing;

std::vector<std::string> at(const HostCheckResult& r, Severity s) {
  std::vector<std::string> out;
  for (const auto& f : r.findings)
    if (f.severity == s) out.push_back(f.rule_id + ": " + f.message);
  return out;
}

const std::string kWhy =
    " (an input that was not captured is not judged; --strict or --expect naming this check makes it a "
    "failure)";

// The healthy P6-B200 node whose bundle has no GDS outputs (no stats, no
// lnetctl, no FSx service state, no /proc/mounts, no hostname).
TEST(CannotTellOnSeedFixture, AHealthyNodeWithoutGdsOutputsPasses) {
  auto r = check_variant("no-gds-outputs");
  EXPECT_THAT(at(r, Severity::Error), IsEmpty());
  EXPECT_THAT(at(r, Severity::Warning), IsEmpty());
  EXPECT_THAT(at(r, Severity::Info),
              ElementsAre("nvidia-fs: cannot tell: absent: not in bundle: nvidia-fs-stats.txt" + kWhy,
                          "lnet-efa: cannot tell: absent: not in bundle: lnetctl-efa.txt" + kWhy,
                          "lnet-efa: cannot tell: absent: not in bundle: efa-fsx-service.txt" + kWhy));
}

TEST(CannotTellOnSeedFixture, StrictMakesEveryUncapturedInputAFailure) {
  HostProfile p = seed_profile("no-gds-outputs");
  HostExpectations e = parse_expectations(kP6);
  e.strict = true;
  auto r = check_host(p, e, nullptr, "host.json");
  EXPECT_THAT(
      at(r, Severity::Error),
      ElementsAre("nvidia-fs: nvidia_fs is loaded but its version is unknown (absent: not in bundle: "
                  "nvidia-fs-stats.txt)",
                  "lnet-efa: cannot read LNet EFA interfaces (absent: not in bundle: lnetctl-efa.txt)",
                  "lnet-efa: configure-efa-fsx-lustre-client.service is unknown (absent: not in bundle: "
                  "efa-fsx-service.txt), expected active"));
  EXPECT_THAT(at(r, Severity::Info), IsEmpty());
}

TEST(CannotTellOnSeedFixture, AnExpectKeyNamingTheCheckMakesItAFailure) {
  auto r = check_variant("no-gds-outputs", std::string(kP6) + ",lnet-efas=8");
  EXPECT_THAT(
      at(r, Severity::Error),
      ElementsAre("lnet-efa: cannot read LNet EFA interfaces (absent: not in bundle: lnetctl-efa.txt)",
                  "lnet-efa: configure-efa-fsx-lustre-client.service is unknown (absent: not in bundle: "
                  "efa-fsx-service.txt), expected active"));
  EXPECT_THAT(at(r, Severity::Info),
              ElementsAre("nvidia-fs: cannot tell: absent: not in bundle: nvidia-fs-stats.txt" + kWhy));
}

TEST(CannotTellOnSeedFixture, AProbeThatRanAndFailedIsStillJudged) {
  // modinfo efa exits 1 ("Module efa not found"): failed, not absent.
  auto r = check_variant("efa-missing", "");
  EXPECT_THAT(messages(r, "efa-driver"),
              ElementsAre("modinfo efa shows no version (failed: modinfo: ERROR: Module efa not found.)"));
  for (const auto& f : r.findings) {
    if (f.rule_id == "efa-driver") {
      EXPECT_EQ(f.severity, Severity::Error);
    }
  }
}

TEST(CannotTellOnSeedFixture, NearMissAbsentWithoutExpectationIsOnlyInfo) {
  // The same missing modinfo, not captured at all, with no efa-driver key.
  HostProfile p = seed_profile();
  p.efa_driver_version.reset();
  p.probes["modinfo-efa.txt"].status = ProbeStatus::Absent;
  p.probes["modinfo-efa.txt"].error = "command not found: modinfo";
  auto r = check_host(p, parse_expectations("gpus=8"), nullptr, "host.json");
  EXPECT_THAT(at(r, Severity::Error), IsEmpty());
  EXPECT_THAT(at(r, Severity::Info),
              ElementsAre("efa-driver: cannot tell: absent: command not found: modinfo" + kWhy));
  r = check_host(p, parse_expectations("gpus=8,efa-driver>=3.3.0"), nullptr, "host.json");
  EXPECT_THAT(at(r, Severity::Error),
              ElementsAre("efa-driver: modinfo efa shows no version (absent: command not found: modinfo)"));
}

TEST(CannotTellOnSeedFixture, NvidiaFsWithoutLustreIsNotGds) {
  HostProfile p = seed_profile();
  p.lustre_mounted = false;
  p.lustre_module_loaded = false;
  p.lnet_efa_count = 0;
  p.efa_fsx_service = "inactive";
  p.nvidia_fs_version = "2.17.0";  // below the minimum: judged only when GDS is in use
  auto r = check_host(p, parse_expectations(""), nullptr, "host.json");
  EXPECT_THAT(messages(r, "nvidia-fs"), IsEmpty());
  EXPECT_THAT(messages(r, "lnet-efa"), IsEmpty());
  r = check_host(p, parse_expectations("gds=yes"), nullptr, "host.json");
  EXPECT_THAT(messages(r, "nvidia-fs"), ElementsAre("nvidia-fs 2.17.0 is below the minimum 2.24.2"));
}

TEST(CannotTellOnSeedFixture, TheSeedBundleRecordsTheLustreMount) {
  HostProfile p = seed_profile();
  EXPECT_EQ(p.lustre_mounted, true);
  EXPECT_EQ(p.probes.at("mounts.txt").parsed["lustre_mounts"], nlohmann::ordered_json::array({"/fsx"}));
}

// tests/fixtures/host/h200-real/h200.json: captured on the real H200 node
// (no systemctl, lsmod, modinfo, fi_info, lfs, lnetctl there).
TEST(CannotTellOnRealH200, ToolsThatAreNotInstalledAreNotFailures) {
  HostProfile p = read_profile(fixture("h200-real/h200.json"));
  auto r = check_host(p, parse_expectations(""), nullptr, "h200.json");
  EXPECT_THAT(
      at(r, Severity::Error),
      ElementsAre("gdrcopy: /dev/gdrdrv is missing (failed: ls: cannot access '/dev/gdrdrv': No such file or "
                  "directory)",
                  "kernel-changed: kernel packages are not held (apt-mark showhold lists no "
                  "linux-image*/linux-aws*)"));
  EXPECT_THAT(at(r, Severity::Info),
              ElementsAre("fabric-manager: cannot tell: absent: command not found: systemctl" + kWhy,
                          "efa-driver: cannot tell: absent: command not found: modinfo" + kWhy,
                          "efa-device-count: cannot tell: absent: command not found: fi_info" + kWhy,
                          "gdrcopy: cannot tell: absent: command not found: lsmod" + kWhy));
}

TEST(HostExpectations, KeysNameTheirChecks) {
  auto e = parse_expectations("gpus=8,kernel=k,fabric-manager=yes,gds=no");
  EXPECT_EQ(e.named, (std::set<std::string>{"gpu-count", "kernel-changed", "fabric-manager"}));
  EXPECT_FALSE(e.strict);
}

}  // namespace
}  // namespace trainimg::host
