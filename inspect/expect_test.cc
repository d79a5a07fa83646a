// SPDX-License-Identifier: GPL-3.0-or-later
#include <gtest/gtest.h>

#include "common/error.h"
#include "inspect/host.h"
#include "inspect/inspect.h"

namespace trainimg::inspect {
namespace {

TEST(ParseExpect, AllFourKeys) {
  auto e = parse_expect("efa-installer=1.50.0,libfabric=2.6.0amzn1.0,aws-ofi-nccl=1.21.1-1,cuda-driver=13.2");
  EXPECT_EQ(e.efa_installer, "1.50.0");
  EXPECT_EQ(e.libfabric, "2.6.0amzn1.0");
  EXPECT_EQ(e.aws_ofi_nccl, "1.21.1-1");
  EXPECT_EQ(e.cuda_driver, "13.2");
  EXPECT_EQ(e.cuda_driver_from, "--expect");
}

std::string error_of(const std::string& spec) {
  try {
    parse_expect(spec);
  } catch (const Error& e) {
    return e.diagnostic().location() + ": " + e.diagnostic().message;
  }
  return "no error";
}

TEST(ParseExpect, PositionedErrors) {
  EXPECT_EQ(error_of("efa-installer=1.50.0,nccl=2.30.7"), "--expect:1:22: unknown key 'nccl'");
  EXPECT_EQ(error_of("libfabric"), "--expect:1:1: expected KEY=VERSION, found 'libfabric'");
  EXPECT_EQ(error_of("libfabric=latest"), "--expect:1:11: 'latest' is not a version for libfabric");
  EXPECT_EQ(error_of("libfabric="), "--expect:1:11: '' is not a version for libfabric");
  EXPECT_EQ(error_of("libfabric=1,libfabric=2"), "--expect:1:13: 'libfabric' given twice");
}

TEST(ImageExpectations, HostProfileThenExpectOverrides) {
  host::HostProfile p;
  p.efa_installer_version = "1.50.0";
  p.libfabric_version = "2.6.0amzn1.0";
  p.cuda_driver_version = "13.2";
  auto e = merge(expectations_from_host(p, "host.json"), parse_expect("efa-installer=1.49.0"));
  EXPECT_EQ(e.efa_installer, "1.49.0");
  EXPECT_EQ(e.efa_installer_from, "--expect");
  EXPECT_EQ(e.libfabric, "2.6.0amzn1.0");
  EXPECT_EQ(e.libfabric_from, "host.json");
  EXPECT_FALSE(e.aws_ofi_nccl);
}

}  // namespace
}  // namespace trainimg::inspect
