// SPDX-License-Identifier: GPL-3.0-or-later
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>

#include "common/error.h"
#include "inspect/host/test_support.h"

namespace trainimg::host {
namespace {
using ::testing::IsEmpty;

TEST(HostRules, ListsTheFifteenIdsOfDomainSection6InOrder) {
  std::vector<std::string> ids;
  for (const auto& r : host_rules()) {
    ids.push_back(r.id);
    EXPECT_EQ(r.kind, "host");
    EXPECT_FALSE(r.fix.empty());
    EXPECT_FALSE(r.seed.empty());
  }
  EXPECT_EQ(ids, (std::vector<std::string>{"gpu-count", "fabric-manager", "efa-driver", "efa-device-count",
                                           "gdrcopy", "memlock", "nvme-mount", "kernel-changed",
                                           "lustre-client", "nvidia-fs", "lnet-efa", "gdscheck",
                                           "gds-compat-mode", "nccl-log", "nccl-tests"}));
}

TEST(HostRules, SeveritiesMatchDomainSection6) {
  for (const auto& r : host_rules()) {
    bool warning = r.id == "nvme-mount" || r.id == "lustre-client";
    EXPECT_EQ(r.severity, warning ? Severity::Warning : Severity::Error) << r.id;
  }
}

TEST(HostRules, EveryIdHasARowInDocsHostMd) {
  std::ifstream in(std::string(TRAINIMG_SOURCE_DIR) + "/docs/host.md");
  std::string doc((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  for (const auto& r : host_rules()) EXPECT_NE(doc.find("| `" + r.id + "` |"), std::string::npos) << r.id;
}

TEST(HostCheckOnSeedFixture, TheValidatedP6B200NodeIsClean) {
  auto r = testing::check_variant("", std::string(testing::kP6) + ",gds=yes,lustre=yes");
  EXPECT_THAT(testing::located(r.findings), IsEmpty());
}

std::string expect_error(const std::string& spec) {
  try {
    parse_expectations(spec);
  } catch (const Error& e) {
    return e.diagnostic().location() + ": " + e.diagnostic().message;
  }
  return "no error";
}

TEST(HostExpectations, ParsesTheIssueExample) {
  auto e = parse_expectations("gpus=8,efas=8,gpu-model=B200,efa-driver>=3.3.0,kernel=7.0.0-1014-aws");
  EXPECT_EQ(e.gpus, 8);
  EXPECT_EQ(e.efas, 8);
  EXPECT_EQ(e.gpu_model, "B200");
  EXPECT_EQ(e.efa_driver_min, "3.3.0");
  EXPECT_EQ(e.kernel, "7.0.0-1014-aws");
}

TEST(HostExpectations, RefusesBadItemsWithTheirColumn) {
  EXPECT_EQ(expect_error("gpus=8,gpu=8"), "--expect:1:8: unknown expectation \"gpu\"");
  EXPECT_EQ(expect_error("gpus=eight"), "--expect:1:6: \"gpus\" needs a count, not \"eight\"");
  EXPECT_EQ(expect_error("kernel"), "--expect:1:1: \"kernel\" has no '=' or '>='");
  EXPECT_EQ(expect_error("gpus>=8"), "--expect:1:5: \"gpus\" takes '=', not '>='");
  EXPECT_EQ(expect_error("lustre=maybe"), "--expect:1:8: \"lustre\" is yes or no, not \"maybe\"");
}

}  // namespace
}  // namespace trainimg::host
