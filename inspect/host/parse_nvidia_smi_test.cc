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
  try {
    parse_nvidia_smi_csv(text, "nvidia-smi.csv");
  } catch (const Error& e) {
    return e.diagnostic().location() + ": " + e.diagnostic().message;
  }
  return "no error";
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

}  // namespace
}  // namespace trainimg::host
