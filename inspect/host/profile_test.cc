// SPDX-License-Identifier: GPL-3.0-or-later
#include <gtest/gtest.h>

#include "common/error.h"
#include "inspect/host.h"
#include "inspect/host/test_support.h"

namespace trainimg::host {
namespace {

HostProfile p6_b200() {
  HostProfile p;
  p.hostname = "ip-10-1-2-3";
  p.captured_at = "2026-10-02T00:00:00Z";
  p.source = "live";
  p.kernel = "7.0.0-1014-aws";
  p.driver_version = "595.91.07";
  p.cuda_driver_version = "13.2";
  p.gpu_model = "NVIDIA B200";
  p.gpu_count = 8;
  for (int i = 0; i < 8; ++i) p.gpus.push_back({i, "NVIDIA B200", "595.91.07"});
  p.efa_installer_version = "1.50.0";
  p.libfabric_version = "2.6.0";
  p.ofi_nccl_version = "1.21.1";
  p.openmpi4_version = "4.1.7";
  p.openmpi5_version = "5.0.9";
  p.efa_device_count = 8;
  p.dev_gdrdrv = true;
  p.held_packages = {"linux-aws", "linux-image-7.0.0-1014-aws"};
  ProbeRecord r;
  r.command = "uname -r";
  r.status = ProbeStatus::Ok;
  r.output = "7.0.0-1014-aws\n";
  r.parsed = {{"kernel", "7.0.0-1014-aws"}};
  p.probes["uname-r.txt"] = r;
  return p;
}

std::string error_of(std::string_view text) {
  return testing::error_of([&] { parse_profile(text, "h.json"); });
}

}  // namespace

TEST(HostProfile, RoundTripsEveryFactAndProbe) {
  HostProfile p = p6_b200();
  HostProfile q = parse_profile(serialize(p));
  EXPECT_EQ(q.kernel, p.kernel);
  EXPECT_EQ(q.driver_version, "595.91.07");
  EXPECT_EQ(q.cuda_driver_version, "13.2");
  EXPECT_EQ(q.gpu_count, 8);
  EXPECT_EQ(q.gpus, p.gpus);
  EXPECT_EQ(q.efa_installer_version, "1.50.0");
  EXPECT_EQ(q.openmpi5_version, "5.0.9");
  EXPECT_EQ(q.dev_gdrdrv, true);
  EXPECT_EQ(q.gdrdrv_loaded, std::nullopt);
  EXPECT_EQ(q.held_packages, p.held_packages);
  ASSERT_EQ(q.probes.count("uname-r.txt"), 1u);
  EXPECT_EQ(q.probes["uname-r.txt"].output, "7.0.0-1014-aws\n");
  EXPECT_EQ(q.probes["uname-r.txt"].status, ProbeStatus::Ok);
  EXPECT_EQ(serialize(q), serialize(p));
}

TEST(HostProfile, AbsentFactsAreNullAndFactRowsSkipThem) {
  HostProfile p;
  p.kernel = "6.8.0-1015-aws";
  auto j = to_json(p);
  EXPECT_TRUE(j["facts"]["driver_version"].is_null());
  auto rows = fact_rows(p);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0], (std::pair<std::string, std::string>("kernel", "6.8.0-1015-aws")));
}

TEST(HostProfile, RefusesAnUnknownSchemaWithItsPosition) {
  EXPECT_EQ(error_of("{\n  \"schema\": \"trainimg.host/v2\"\n}"),
            "h.json:2:3: unsupported profile schema \"trainimg.host/v2\" (this trainimg reads \"trainimg.host/v1\")");
}

TEST(HostProfile, RefusesAMissingSchema) {
  EXPECT_EQ(error_of("{\"facts\": {}}"),
            "h.json: not a host profile: no \"schema\" field (expected \"trainimg.host/v1\")");
}

TEST(HostProfile, NamesTheKeyOfAWrongType) {
  EXPECT_EQ(error_of("{\"schema\": \"trainimg.host/v1\",\n \"facts\": {\n  \"gpu_count\": \"8\"}}"),
            "h.json:3:3: \"gpu_count\" must be an integer, not string");
  EXPECT_EQ(error_of("{\"schema\": \"trainimg.host/v1\", \"facts\": {\"held_packages\": [\"a\", 1]}}"),
            "h.json:1:42: \"held_packages\" must hold only strings, found number");
  EXPECT_EQ(error_of("{\"schema\": \"trainimg.host/v1\", \"probes\": {\"uname-r.txt\": {\"status\": \"weird\"}}}"),
            "h.json:1:59: unknown probe status \"weird\" (ok, absent, failed, timeout)");
}

TEST(HostProfile, PositionsMalformedJson) {
  EXPECT_EQ(error_of("{\n  \"schema\": \"trainimg.host/v1\",\n}"),
            "h.json:3:1: invalid JSON: syntax error while parsing object key - unexpected '}'; expected string literal");
  EXPECT_EQ(error_of("[1]"), "h.json:1:1: a host profile must be a JSON object, not array");
}

// nlohmann throws out_of_range, not parse_error, for a number no double
// holds; it must still be the one-line "invalid JSON" error.
TEST(HostProfile, ANumberNoDoubleHoldsIsInvalidJson) {
  EXPECT_EQ(error_of("{\"schema\": \"trainimg.host/v1\", \"x\": 1e999}"),
            "h.json: invalid JSON: [json.exception.out_of_range.406] number overflow parsing '1e999'");
}

TEST(HostProfile, IgnoresUnknownFieldsForwardCompatibly) {
  HostProfile p = parse_profile("{\"schema\": \"trainimg.host/v1\", \"facts\": {\"kernel\": \"k\", \"future\": 1}}");
  EXPECT_EQ(p.kernel, "k");
}

}  // namespace trainimg::host
