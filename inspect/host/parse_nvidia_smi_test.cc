// SPDX-License-Identifier: GPL-3.0-or-later
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "common/error.h"
#include "inspect/host/parsers.h"
#include "inspect/host/test_support.h"

namespace trainimg::host {
namespace {
using testing::read_fixture;

std::string error_of(std::string_view text) {
  return testing::error_of([&] { parse_nvidia_smi_csv(text, "nvidia-smi.csv"); });
}

TEST(NvidiaSmiCsvOnSeedFixture, ReadsEightB200WithTheDriver) {
  auto gpus = parse_nvidia_smi_csv(read_fixture("p6-b200/nvidia-smi.csv"), "f");
  ASSERT_EQ(gpus.size(), 8u);
  EXPECT_EQ(gpus[7], (Gpu{7, "NVIDIA B200", "595.91.07"}));
}

TEST(NvidiaSmiCsv, AcceptsCrlfAndNoHeader) {
  auto gpus = parse_nvidia_smi_csv("0, NVIDIA H200, 570.133.20\r\n1, NVIDIA H200, 570.133.20\r\n", "f");
  ASSERT_EQ(gpus.size(), 2u);
  EXPECT_EQ(gpus[1].driver_version, "570.133.20");
}

TEST(NvidiaSmiCsv, EmptyOutputMeansNoGpu) { EXPECT_TRUE(parse_nvidia_smi_csv("", "f").empty()); }

TEST(NvidiaSmiCsvOnSeedFixture, RefusesAnExtraColumnWithItsLine) {
  EXPECT_EQ(error_of(read_fixture("variants/csv-extra-column/nvidia-smi.csv")),
            "nvidia-smi.csv:1:1: expected 3 columns (index, name, driver_version), found 4");
}

TEST(NvidiaSmiCsvOnSeedFixture, RefusesATruncatedRow) {
  EXPECT_EQ(error_of(read_fixture("variants/csv-truncated/nvidia-smi.csv")),
            "nvidia-smi.csv:9:1: expected 3 columns (index, name, driver_version), found 2");
}

TEST(NvidiaSmiCsv, RefusesANonNumericIndex) {
  EXPECT_EQ(error_of("index, name, driver_version\nzero, NVIDIA B200, 595.91.07\n"),
            "nvidia-smi.csv:2:1: GPU index \"zero\" is not a number");
}

// Columns are found by the header's field names, as nvidia-smi prints
// them: "memory.total [MiB]" for a field with units.
TEST(NvidiaSmiCsv, ReadsExtraAndReorderedColumnsByTheHeader) {
  auto gpus = parse_nvidia_smi_csv(
      "name, index, pci.bus_id, driver_version, memory.total [MiB], mig.mode.current\n"
      "NVIDIA H100 80GB HBM3, 0, 00000000:53:00.0, 535.183.01, 81559 MiB, Enabled\n"
      "NVIDIA H100 80GB HBM3, 1, 00000000:64:00.0, 535.183.01, 81559 MiB, [N/A]\n",
      "f");
  ASSERT_EQ(gpus.size(), 2u);
  EXPECT_EQ(gpus[1], (Gpu{1, "NVIDIA H100 80GB HBM3", "535.183.01"}));
}

TEST(NvidiaSmiCsv, RefusesAHeaderWithoutTheDriverColumn) {
  EXPECT_EQ(error_of("index, name\n0, NVIDIA B200\n"),
            "nvidia-smi.csv:1:1: the header has no driver_version column");
}

TEST(NvidiaSmiCsv, NoDevicesWereFoundMeansNoGpu) {
  EXPECT_TRUE(parse_nvidia_smi_csv("No devices were found\n", "f").empty());
}

TEST(NvidiaSmiCsv, AGpuFallenOffTheBusIsReportedWithNvidiaSmisWords) {
  EXPECT_EQ(
      error_of("index, name, driver_version\n0, NVIDIA A100-SXM4-40GB, 470.57.02\n"
               "Unable to determine the device handle for GPU0000:07:00.0: Unknown Error\n"),
      "nvidia-smi.csv:3:1: nvidia-smi printed \"Unable to determine the device handle for GPU0000:07:00.0: "
      "Unknown Error\" instead of a GPU row");
}

TEST(NvidiaSmiCsv, ReadsRowsBehindAnSrunLabel) {
  auto gpus = parse_nvidia_smi_csv("0: index, name, driver_version\n0: 0, NVIDIA H200, 570.133.20\n", "f");
  ASSERT_EQ(gpus.size(), 1u);
  EXPECT_EQ(gpus[0].name, "NVIDIA H200");
}

TEST(NvidiaSmiBannerOnSeedFixture, ReadsTheCudaDriverVersion) {
  EXPECT_EQ(parse_nvidia_smi_cuda_version(read_fixture("p6-b200/nvidia-smi.txt")), "13.2");
  EXPECT_EQ(parse_nvidia_smi_cuda_version("CUDA Version                          : 12.8\n"), "12.8");
  EXPECT_EQ(parse_nvidia_smi_cuda_version("NVIDIA-SMI has failed\n"), std::nullopt);
}

TEST(ModinfoOnSeedFixture, ReadsTheEfaVersion) {
  EXPECT_EQ(parse_modinfo_version(read_fixture("p6-b200/modinfo-efa.txt")), "3.3.0");
  EXPECT_EQ(parse_modinfo_version("filename: /x/efa.ko\nsrcversion: ABC\n"), std::nullopt);
  EXPECT_EQ(parse_modinfo_version(read_fixture("variants/crlf/modinfo-efa.txt")), "3.3.0");
}

// `cat /sys/module/efa/version` and `modinfo -F version efa` print the bare
// version; `modinfo efa | grep -E "^version"` (seed 000) the one line.
TEST(Modinfo, ReadsABareVersion) {
  EXPECT_EQ(parse_modinfo_version("2.13.0g\n"), "2.13.0g");
  EXPECT_EQ(parse_modinfo_version("version:        3.3.0\r\n"), "3.3.0");
  EXPECT_EQ(parse_modinfo_version("modinfo: ERROR: Module efa not found.\n"), std::nullopt);
}

}  // namespace
}  // namespace trainimg::host
