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

// Older EFA drivers named the device efa_0 (libfabric issue #5689 shows
// "domain: efa_0-rdm"): an EFA device all the same.
TEST(Infiniband, CountsTheOlderEfaDeviceNames) {
  auto d = parse_infiniband("efa_0\nefa_1\nmlx5_0\n");
  EXPECT_THAT(d.efa, ElementsAre("efa_0", "efa_1"));
  EXPECT_THAT(d.connectx, ElementsAre("mlx5_0"));
}

// `ls -l` lists each device as a symlink into /sys/devices.
TEST(Infiniband, ReadsALongListing) {
  auto d = parse_infiniband(
      "total 0\n"
      "lrwxrwxrwx 1 root root 0 Dec  4 17:00 rdmap79s0 -> "
      "../../devices/pci0000:00/0000:00:05.0/infiniband/rdmap79s0\n"
      "lrwxrwxrwx 1 root root 0 Dec  4 17:00 mlx5_0 -> "
      "../../devices/pci0000:00/0000:00:06.0/infiniband/mlx5_0\n");
  EXPECT_THAT(d.all, ElementsAre("rdmap79s0", "mlx5_0"));
  EXPECT_THAT(d.efa, ElementsAre("rdmap79s0"));
}

// Seed 000's own command, `ls /sys/class/infiniband/ | grep -c rdmap`,
// prints the count alone.
TEST(Infiniband, ReadsTheCountOfTheSeedsGrepC) {
  auto d = parse_infiniband("8\n");
  EXPECT_EQ(d.counted, 8);
  EXPECT_TRUE(d.all.empty());
  EXPECT_EQ(parse_infiniband("rdmap79s0\n").counted, std::nullopt);
}

TEST(FiInfo, ReadsTheOlderEfaDomainsAndDatagramEndpoints) {
  EXPECT_THAT(
      parse_fi_info_domains("provider: efa\n    fabric: EFA-fe80::1\n    domain: efa_0-rdm\n"
                            "provider: efa\n    fabric: EFA-fe80::1\n    domain: efa_0-dgrm\n"
                            "provider: efa;ofi_rxd\n    fabric: EFA-fe80::1\n    domain: efa_0-dgrm\n"),
      ElementsAre("efa_0"));
}

// fi_info -v prints each fi_info as YAML: the domain's name is `name:` under
// fi_domain_attr, and `domain:` there is a pointer.
TEST(FiInfo, ReadsVerboseOutput) {
  std::string one =
      "---\nfi_info:\n    caps: [ FI_MSG, FI_RMA ]\n    fi_ep_attr:\n        type: FI_EP_RDM\n"
      "    fi_domain_attr:\n        domain: 0x0\n        name: rdmap16s27-rdm\n"
      "        threading: FI_THREAD_SAFE\n    fi_fabric_attr:\n        name: efa\n"
      "        prov_name: efa\n---\n";
  std::string two = one;
  two.replace(two.find("rdmap16s27"), 10, "rdmap32s27");
  EXPECT_THAT(parse_fi_info_domains(one + two), ElementsAre("rdmap16s27", "rdmap32s27"));
}

}  // namespace
}  // namespace trainimg::host
