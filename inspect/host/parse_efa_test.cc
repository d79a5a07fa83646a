// SPDX-License-Identifier: GPL-3.0-or-later
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "inspect/host/parsers.h"
#include "inspect/host/test_support.h"

namespace trainimg::host {
namespace {
using ::testing::ElementsAre;
using testing::read_fixture;

TEST(EfaManifestOnSeedFixture, ReadsTheInstallerAndItsComponents) {
  auto m = parse_efa_manifest(read_fixture("p6-b200/efa_installed_packages"));
  EXPECT_EQ(m.installer_version, "1.50.0");
  EXPECT_EQ(m.libfabric, "2.6.0");
  EXPECT_EQ(m.ofi_nccl, "1.21.1");
  EXPECT_EQ(m.openmpi4, "4.1.7");
  EXPECT_EQ(m.openmpi5, "5.0.9");
  EXPECT_EQ(m.pmix, "4.2.8");
  EXPECT_EQ(m.packages.at("libfabric1-aws"), "2.6.0amzn1.0");
}

TEST(EfaManifest, AcceptsRpmNamesOneALineAndCrlf) {
  auto m = parse_efa_manifest(
      "# EFA installer version: 1.38.0\r\n# Packages installed:\r\nlibfabric-aws-1.22.0amzn4.0-1.amzn2023.x86_64.rpm\r\n"
      "libnccl-ofi-ngc-v3-1.13.2-1.x86_64\r\nopenmpi40-aws-4.1.7-1.amzn2023.x86_64\r\n");
  EXPECT_EQ(m.installer_version, "1.38.0");
  EXPECT_EQ(m.libfabric, "1.22.0");
  EXPECT_EQ(m.ofi_nccl, "1.13.2");
  EXPECT_EQ(m.openmpi4, "4.1.7");
  EXPECT_EQ(m.openmpi5, std::nullopt);
}

TEST(EfaManifest, TruncatedHeaderLeavesTheVersionUnknown) {
  auto m = parse_efa_manifest("# EFA installer vers");
  EXPECT_EQ(m.installer_version, std::nullopt);
  EXPECT_TRUE(m.packages.empty());
}

TEST(InfinibandOnSeedFixture, SeparatesEfaFromConnectX) {
  auto d = parse_infiniband(read_fixture("variants/connectx/infiniband.txt"));
  EXPECT_EQ(d.efa.size(), 8u);
  EXPECT_THAT(d.connectx, ElementsAre("ibp115s0f0", "ibp116s0f0", "mlx5_0"));
  EXPECT_TRUE(d.other.empty());
}

TEST(FiInfoOnSeedFixture, CountsDistinctDevices) {
  EXPECT_EQ(parse_fi_info_domains(read_fixture("p6-b200/fi_info.txt")).size(), 8u);
  // libfabric 2.x lists each device under efa ("-rdm") and efa-direct: still 8.
  EXPECT_EQ(parse_fi_info_domains(read_fixture("variants/fi-info-direct/fi_info.txt")).size(), 8u);
  EXPECT_EQ(parse_fi_info_domains(read_fixture("variants/fi-info-six/fi_info.txt")).size(), 6u);
  EXPECT_TRUE(parse_fi_info_domains("fi_getinfo: -61 (No data available)\n").empty());
}

}  // namespace
}  // namespace trainimg::host
