// SPDX-License-Identifier: GPL-3.0-or-later
// Every image rule, firing and quiet, gives the same findings whatever kind
// of source carries the image: NGC-like fixtures written as a rootfs, docker
// archives, OCI layouts, real mksquashfs .sqsh files and a memory source.
#include <gtest/gtest.h>

#include <set>

#include "inspect/rules/rule_test_util.h"

namespace trainimg::inspect::rules {
namespace {

using testing::FixtureKind;

struct Scenario {
  const char* name;
  testing::ImageSpec (*image)();
  const char* expect;
};

testing::ImageSpec everything_wrong() {
  testing::NgcOptions o;
  o.nccl = "2.16.5";
  auto img = testing::ngc_image(o);
  img.layers[0].file("/opt/amazon/aws-ofi-nccl/lib/libnccl-net-ofi.so",
                     testing::plugin_elf("1.19.0", {"ncclNetPlugin_v6"}), 0755);
  img.layer().file("/usr/local/lib/libfabric.so.1", testing::libfabric_elf("source build"), 0755);
  testing::set_env(img, "LD_LIBRARY_PATH", "/usr/local/lib:/opt/amazon/aws-ofi-nccl/lib:/opt/amazon/ofi-nccl/lib:/opt/amazon/efa/lib");
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

testing::ImageSpec seed_002_layout() { return testing::ngc_image(); }

const Scenario kScenarios[] = {
    {"everything_wrong", everything_wrong, "efa-installer=1.47.0,libfabric=2.4.0,aws-ofi-nccl=1.19.0,cuda-driver=13.2"},
    {"base_only", base_only_without_plugin_env, "efa-installer=1.50.0,libfabric=2.6.0,aws-ofi-nccl=1.21.1"},
    {"plugin_deleted", plugin_deleted, "efa-installer=1.50.0"},
    {"seed_002_layout", seed_002_layout, "efa-installer=1.50.0,libfabric=2.6.0,aws-ofi-nccl=1.21.1,cuda-driver=13.4"},
};

// Findings with layer ids replaced by their index, so kinds compare.
std::vector<std::string> findings(const Scenario& s, FixtureKind kind) {
  auto f = testing::facts_of(s.image(), kind);
  std::vector<std::string> out;
  for (const auto& d : check_image(f, parse_expect(s.expect))) {
    std::string line = d.rule_id + " " + std::string(to_string(d.severity)) + " " + d.path + " | " + d.message;
    for (size_t i = 0; i < f.layers.size(); ++i)
      for (size_t at = line.find(f.layers[i]); at != std::string::npos; at = line.find(f.layers[i]))
        line.replace(at, f.layers[i].size(), "L" + std::to_string(f.layers.size() == 1 ? 0 : i));
    // Config-less kinds read the same Env from /etc/environment.
    if (auto at = line.find("(image config)"); at != std::string::npos) line.replace(at, 14, "(/etc/environment)");
    out.push_back(line);
  }
  return out;
}

std::set<std::string> ids(const std::vector<std::string>& lines) {
  std::set<std::string> out;
  for (const auto& l : lines) out.insert(l.substr(0, l.find(' ')));
  return out;
}

TEST(EveryRule, NgcLikeScenariosFireEveryRuleAndTheSeedLayoutOnlyNotesMpi) {
  std::set<std::string> fired;
  for (const auto& s : kScenarios) {
    auto f = findings(s, FixtureKind::Dir);
    if (std::string(s.name) != "seed_002_layout") {
      auto i = ids(f);
      fired.insert(i.begin(), i.end());
    } else {
      ASSERT_EQ(f.size(), 1u) << f[0];
      EXPECT_TRUE(f[0].starts_with("mpi-multiple-installs info ")) << f[0];
    }
  }
  std::set<std::string> all;
  for (const auto& r : image_rules()) all.insert(r.id);
  EXPECT_EQ(fired, all);
}

class EveryKind : public ::testing::TestWithParam<FixtureKind> {};

TEST_P(EveryKind, NgcLikeScenariosGiveTheSameFindingsAsDir) {
  for (const auto& s : kScenarios) {
    auto dir = findings(s, FixtureKind::Dir), other = findings(s, GetParam());
    // A flattened dir/sqsh has no layer that deleted the plugin: the message
    // differs there (missing vs deleted by layer N), the rules do not.
    if (std::string(s.name) == "plugin_deleted") EXPECT_EQ(ids(dir), ids(other)) << s.name;
    else EXPECT_EQ(dir, other) << s.name;
  }
}

INSTANTIATE_TEST_SUITE_P(Kinds, EveryKind,
                         ::testing::Values(FixtureKind::DockerArchive, FixtureKind::OciGzip, FixtureKind::SqshLzoNoD,
                                           FixtureKind::Memory),
                         [](const auto& info) { return testing::to_string(info.param); });

}  // namespace
}  // namespace trainimg::inspect::rules
