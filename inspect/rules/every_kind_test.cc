// SPDX-License-Identifier: GPL-3.0-or-later
// Every image rule, firing and quiet, gives the same findings whatever kind
// of source carries the image: NGC-like fixtures written as a rootfs, docker
// archives, OCI layouts, real mksquashfs .sqsh files, a memory source, and
// images loaded into the real Docker daemon and read back as dockerd://TAG
// (skipped, saying why, when there is no daemon socket), and OCI layouts
// pushed with skopeo to the test registry of .ci/start-registry.sh and read
// back as docker://127.0.0.1:5500/… (skipped when it is not running, failed
// under TRAINIMG_CI=1).
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <functional>
#include <map>
#include <set>
#include <stdexcept>

#include "inspect/rules/rule_test_util.h"
#include "inspect/sources/registry_source.h"

namespace trainimg::inspect::rules {
namespace {

using testing::FixtureKind;

// An NGC-like image, the `--expect` it is checked against, and the rules
// that must fire on it; every rule missing there must stay quiet.
struct Scenario {
  const char* name;
  testing::ImageSpec (*image)();
  const char* expect;
  std::set<std::string> fires;
};

testing::ImageSpec everything_wrong() {
  testing::NgcOptions o;
  o.nccl = "2.16.5";
  auto img = testing::ngc_image(o);
  img.layers[0].file("/opt/amazon/aws-ofi-nccl/lib/libnccl-net-ofi.so",
                     testing::plugin_elf("1.19.0", {"ncclNetPlugin_v6"}), 0755);
  img.layer().file("/usr/local/lib/libfabric.so.1", testing::libfabric_elf("source build"), 0755);
  testing::set_env(
      img, "LD_LIBRARY_PATH",
      "/usr/local/lib:/opt/amazon/aws-ofi-nccl/lib:/opt/amazon/ofi-nccl/lib:/opt/amazon/efa/lib");
  testing::set_env(img, "OPAL_PREFIX", "/opt/amazon/openmpi");
  testing::set_env(img, "NCCL_NET", "IB");
  testing::set_env(img, "NCCL_IB_HCA", "mlx5");
  return img;
}

testing::ImageSpec base_only_without_plugin_env() {
  testing::NgcOptions o;
  o.installer = false;
  auto img = testing::ngc_image(o);
  testing::set_env(img, "NCCL_NET_PLUGIN", std::nullopt);
  return img;
}

testing::ImageSpec plugin_deleted() {
  auto img = testing::ngc_image();
  img.layer().whiteout("/opt/amazon/ofi-nccl");
  return img;
}

testing::ImageSpec seed_002_layout() {
  return testing::ngc_image();
}

const Scenario kScenarios[] = {
    {"everything_wrong",
     everything_wrong,
     "efa-installer=1.47.0,libfabric=2.4.0,aws-ofi-nccl=1.19.0,cuda-driver=13.2",
     {"cuda-forward-compat", "efa-host-mismatch", "ld-library-path-order", "libfabric-shadowed",
      "mpi-conflict", "mpi-multiple-installs", "nccl-ib-settings", "ofi-nccl-nccl-compat",
      "ofi-nccl-shadowed"}},
    // NGC's MPI alone: the near miss of mpi-multiple-installs.
    {"base_only",
     base_only_without_plugin_env,
     "efa-installer=1.50.0,libfabric=2.6.0,aws-ofi-nccl=1.21.1",
     {"efa-installer-missing", "libfabric-host-mismatch", "nccl-net-plugin", "ofi-nccl-host-mismatch"}},
    {"plugin_deleted",
     plugin_deleted,
     "efa-installer=1.50.0",
     {"efa-stack-incomplete", "mpi-multiple-installs", "nccl-net-plugin"}},
    // The near miss of every other rule, the host expectations met; the
    // installer's MPI beside NGC's is reported as expected.
    {"seed_002_layout",
     seed_002_layout,
     "efa-installer=1.50.0,libfabric=2.6.0,aws-ofi-nccl=1.21.1,cuda-driver=13.4",
     {"mpi-multiple-installs"}},
};

// Findings with layer ids replaced by their index, so kinds compare.
std::vector<std::string> findings_of(const Scenario& s, const facts::ImageFacts& f) {
  std::vector<std::string> out;
  for (const auto& d : check_image(f, parse_expect(s.expect))) {
    std::string line =
        d.rule_id + " " + std::string(to_string(d.severity)) + " " + d.path + " | " + d.message;
    for (size_t i = 0; i < f.layers.size(); ++i)
      for (size_t at = line.find(f.layers[i]); at != std::string::npos; at = line.find(f.layers[i]))
        line.replace(at, f.layers[i].size(), "L" + std::to_string(f.layers.size() == 1 ? 0 : i));
    // Config-less kinds read the same Env from /etc/environment.
    if (auto at = line.find("(image config)"); at != std::string::npos)
      line.replace(at, 14, "(/etc/environment)");
    out.push_back(line);
  }
  return out;
}

std::vector<std::string> findings(const Scenario& s, FixtureKind kind) {
  return findings_of(s, testing::facts_of(s.image(), kind));
}

// "rule-id severity" of each finding.
std::set<std::string> fired(const std::vector<std::string>& lines) {
  std::set<std::string> out;
  for (const auto& l : lines) out.insert(l.substr(0, l.find(' ', l.find(' ') + 1)));
  return out;
}

std::set<std::string> rule_ids(const std::set<std::string>& fired) {
  std::set<std::string> out;
  for (const auto& f : fired) out.insert(f.substr(0, f.find(' ')));
  return out;
}

std::string joined(const std::set<std::string>& s) {
  std::string out;
  for (const auto& x : s) out += (out.empty() ? "" : ", ") + x;
  return out;
}

// In each kind, each scenario fires exactly its rules, so every rule has a
// firing case and a near miss (a scenario where it stays quiet) in that kind;
// and the findings, messages and paths included, are Dir's.
void expect_every_rule_as_dir_does(const std::string& kind,
                                   const std::function<std::vector<std::string>(const Scenario&)>& of,
                                   bool is_dir) {
  std::set<std::string> all, fired_somewhere, quiet_somewhere;
  for (const auto& r : image_rules()) all.insert(r.id);
  for (const auto& s : kScenarios) {
    auto got = of(s);
    auto f = fired(got);
    auto ids = rule_ids(f);
    EXPECT_EQ(joined(ids), joined(s.fires)) << kind << " " << s.name;
    for (const auto& id : all) (ids.count(id) ? fired_somewhere : quiet_somewhere).insert(id);
    if (is_dir) continue;
    auto dir = findings(s, FixtureKind::Dir);
    // A flattened dir/sqsh has no layer that deleted the plugin: the message
    // differs there (missing vs deleted by layer N), the rules do not.
    if (std::string(s.name) == "plugin_deleted")
      EXPECT_EQ(fired(dir), f) << s.name;
    else
      EXPECT_EQ(dir, got) << s.name;
  }
  EXPECT_EQ(joined(fired_somewhere), joined(all)) << kind;
  EXPECT_EQ(joined(quiet_somewhere), joined(all)) << kind;
}

class EveryKind : public ::testing::TestWithParam<FixtureKind> {};

TEST_P(EveryKind, NgcLikeScenariosFireEveryRuleAndKeepEachQuietOnceAsDirDoes) {
  const FixtureKind kind = GetParam();
  if (auto why = testing::unavailable(kind)) GTEST_SKIP() << *why;
  expect_every_rule_as_dir_does(
      to_string(kind), [&](const Scenario& s) { return findings(s, kind); }, kind == FixtureKind::Dir);
}

// What the job-start gate does with the facts a sidecar keeps: the rules on
// facts read back from facts_json (through text) give exactly the findings
// of the facts themselves, for every scenario and kind, against several
// host stacks: the scenario's own, none, one that matches the seed 002
// layout and one that matches nothing.
TEST_P(EveryKind, NgcLikeScenariosGiveTheSameFindingsFromSerializedFacts) {
  const FixtureKind kind = GetParam();
  if (auto why = testing::unavailable(kind)) GTEST_SKIP() << *why;
  size_t compared = 0;
  for (const auto& s : kScenarios) {
    facts::ImageFacts f = testing::facts_of(s.image(), kind);
    facts::ImageFacts back = facts_from_json(nlohmann::ordered_json::parse(facts_json(f).dump()), "sidecar");
    for (std::string spec :
         {std::string(s.expect), std::string(),
          std::string("efa-installer=1.50.0,libfabric=2.6.0,aws-ofi-nccl=1.21.1,cuda-driver=13.4"),
          std::string("efa-installer=1.47.0,libfabric=2.4.0,aws-ofi-nccl=1.19.0,cuda-driver=13.2")}) {
      ImageExpectations e = spec.empty() ? ImageExpectations{} : parse_expect(spec);
      auto want = check_image(f, e), got = check_image(back, e);
      ASSERT_EQ(want.size(), got.size()) << s.name << " " << spec;
      for (size_t i = 0; i < want.size(); ++i) {
        EXPECT_EQ(want[i].rule_id, got[i].rule_id) << s.name << " " << spec;
        EXPECT_EQ(want[i].severity, got[i].severity) << s.name << " " << spec << " " << want[i].rule_id;
        EXPECT_EQ(want[i].message, got[i].message) << s.name << " " << spec;
        EXPECT_EQ(want[i].path, got[i].path) << s.name << " " << spec << " " << want[i].rule_id;
        EXPECT_EQ(want[i].layer, got[i].layer) << s.name << " " << spec << " " << want[i].rule_id;
        EXPECT_EQ(want[i].file, got[i].file) << s.name << " " << spec << " " << want[i].rule_id;
        EXPECT_EQ(want[i].hint, got[i].hint) << s.name << " " << spec << " " << want[i].rule_id;
      }
      compared += want.size();
    }
  }
  RecordProperty("findings_compared", static_cast<int>(compared));
  EXPECT_GE(compared, 60u);  // 73: the scenarios fire most rules under each stack
}

// The registry kind: each scenario as an OCI layout (gzip layers) pushed
// with skopeo, then read through the registry source (blob cache in a
// temporary directory).
class EveryKindRegistry : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* st = std::getenv("TRAINIMG_REGISTRY_STATE");
    const char* tmp = std::getenv("TMPDIR");
    std::string state = st && *st ? st : std::string(tmp && *tmp ? tmp : "/tmp") + "/trainimg-registry";
    if (!std::filesystem::exists(state + "/env") ||
        std::system("curl -s -o /dev/null --max-time 2 http://127.0.0.1:5500/v2/") != 0) {
      if (std::getenv("TRAINIMG_CI")) FAIL() << "the test registry is not running (.ci/start-registry.sh)";
      GTEST_SKIP() << "no test registry (run .ci/start-registry.sh)";
    }
    for (const char* k : {"TRAINIMG_ALLOW_HTTP", "TRAINIMG_CACHE", "no_proxy"})
      if (const char* v = std::getenv(k)) saved_[k] = v;
    ::setenv("TRAINIMG_ALLOW_HTTP", "1", 1);
    ::setenv("TRAINIMG_CACHE", cache_.path().c_str(), 1);
    ::setenv("no_proxy", "127.0.0.1,localhost", 1);
  }
  void TearDown() override {
    for (const char* k : {"TRAINIMG_ALLOW_HTTP", "TRAINIMG_CACHE", "no_proxy"})
      if (saved_.count(k))
        ::setenv(k, saved_[k].c_str(), 1);
      else
        ::unsetenv(k);
  }
  facts::ImageFacts registry_facts(const Scenario& s) {
    testing::ImageSpec img = s.image();
    std::string env;  // as facts_of does for every kind
    for (const auto& kv : img.config.env) env += kv + "\n";
    img.layer().file("/etc/environment", env);
    img.tag = std::string("every-kind:") + s.name;
    testing::TempDir t;
    testing::write_oci_layout(img, t / "oci");
    std::string ref = std::string("127.0.0.1:5500/test/every-kind:") + s.name;
    std::string cmd = "skopeo copy --quiet --dest-tls-verify=false oci:" + (t / "oci") + ":" + s.name +
                      " docker://" + ref + " >/dev/null";
    if (std::system(cmd.c_str()) != 0) throw std::runtime_error("skopeo failed: " + cmd);
    auto src = open_source("docker://" + ref);
    EXPECT_EQ(src->describe().kind, "registry");
    return facts::gather_facts(*src);
  }
  testing::TempDir cache_;
  std::map<std::string, std::string> saved_;
};

TEST_F(EveryKindRegistry, NgcLikeScenariosFireEveryRuleAndKeepEachQuietOnceAsDirDoes) {
  expect_every_rule_as_dir_does(
      "Registry", [&](const Scenario& s) { return findings_of(s, registry_facts(s)); }, false);
}

INSTANTIATE_TEST_SUITE_P(Kinds, EveryKind,
                         ::testing::Values(FixtureKind::Dir, FixtureKind::DockerArchive, FixtureKind::OciGzip,
                                           FixtureKind::OciArchive, FixtureKind::SqshLzoNoD,
                                           FixtureKind::Memory, FixtureKind::Dockerd),
                         [](const auto& info) { return testing::to_string(info.param); });

}  // namespace
}  // namespace trainimg::inspect::rules
