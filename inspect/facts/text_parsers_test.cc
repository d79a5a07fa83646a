// SPDX-License-Identifier: GPL-3.0-or-later
#include "inspect/facts/text_parsers.h"

#include <gtest/gtest.h>

namespace trainimg::inspect::facts {
namespace {

// The deb installer's manifest: comments, then one space-separated line.
TEST(EfaManifest, DebFormSpaceSeparated) {
  auto m = parse_efa_manifest(
      "# EFA installer version: 1.50.0\n"
      "# Debug packages installed: no\n"
      "# Packages installed:\n"
      "ibverbs-providers_58.0-1_amd64 libfabric1-aws_2.6.0amzn1.0_amd64 "
      "libnccl-ofi-ngc-v3_1.21.1-1_amd64 openmpi40-aws_4.1.7-1_amd64 openmpi50-aws_5.0.9-1_amd64\n");
  EXPECT_EQ(m.installer_version, "1.50.0");
  ASSERT_EQ(m.packages.size(), 5u);
  EXPECT_EQ(m.packages[1], (Package{"libfabric1-aws", "2.6.0amzn1.0", "amd64"}));
  EXPECT_EQ(m.packages[2], (Package{"libnccl-ofi-ngc-v3", "1.21.1-1", "amd64"}));
}

// The rpm installer's manifest: name-version-release.arch, one a line.
TEST(EfaManifest, RpmFormLineSeparated) {
  auto m = parse_efa_manifest(
      "# EFA installer version: 1.38.1\n"
      "libfabric-aws-1.22.0amzn4.0-1.amzn2.x86_64\n"
      "rdma-core-54.0-1.amzn2.x86_64\n\r\n"
      "aws-ofi-nccl-1.13.2\n");
  EXPECT_EQ(m.installer_version, "1.38.1");
  ASSERT_EQ(m.packages.size(), 3u);
  EXPECT_EQ(m.packages[0], (Package{"libfabric-aws", "1.22.0amzn4.0-1.amzn2", "x86_64"}));
  EXPECT_EQ(m.packages[1].name, "rdma-core");
  EXPECT_EQ(m.packages[2], (Package{"aws-ofi-nccl", "1.13.2", ""}));
}

TEST(EfaManifest, NoVersionLineAndJunkWords) {
  auto m = parse_efa_manifest("# something else\nnot-a-package libfoo\n");
  EXPECT_EQ(m.installer_version, "");
  EXPECT_TRUE(m.packages.empty());
}

TEST(DpkgStatus, OnlyInstalledPackagesWithVersions) {
  auto s = parse_dpkg_status(
      "Package: libfabric1-aws\nStatus: install ok installed\nVersion: 2.6.0amzn1.0\n"
      "Description: x\n continuation: not a field\n\n"
      "Package: libfabric1\nStatus: deinstall ok config-files\nVersion: 1.17.0-3\n\n"
      "Package: openmpi40-aws\nStatus: install ok installed\nVersion: 4.1.7-1\n");
  EXPECT_EQ(s, (std::map<std::string, std::string>{{"libfabric1-aws", "2.6.0amzn1.0"}, {"openmpi40-aws", "4.1.7-1"}}));
  auto only = parse_dpkg_status("Package: a\nStatus: install ok installed\nVersion: 1\n",
                                [](std::string_view n) { return n != "a"; });
  EXPECT_TRUE(only.empty());
}

TEST(PkgConfig, VersionWithVariables) {
  EXPECT_EQ(parse_pc_version("prefix=/opt/amazon/efa\nmajor=2\nName: libfabric\nVersion: ${major}.6.0amzn1.0\n"),
            "2.6.0amzn1.0");
  EXPECT_EQ(parse_pc_version("Name: ompi\nDescription: Open MPI\n"), "");
}

TEST(Headers, FabricMpiNcclVersionMacros) {
  EXPECT_EQ(fabric_h_version("#define FI_MAJOR_VERSION 2\n#define FI_MINOR_VERSION 6\n"), "2.6");
  EXPECT_EQ(fabric_h_version("#  define FI_MAJOR_VERSION 1\n#define FI_MINOR_VERSION 22\n#define FI_REVISION_VERSION 0\n"),
            "1.22.0");
  EXPECT_EQ(mpi_h_version("#define OMPI_MAJOR_VERSION 5\n#define OMPI_MINOR_VERSION 0\n#define OMPI_RELEASE_VERSION 9\n"),
            "5.0.9");
  EXPECT_EQ(nccl_h_version("#define NCCL_MAJOR 2\n#define NCCL_MINOR 30\n#define NCCL_PATCH 7\n"
                           "#define NCCL_VERSION_CODE 23007\n"),
            "2.30.7");
  EXPECT_EQ(nccl_h_version("#define NCCL_MAJOR 2\n"), "");
  EXPECT_EQ(fabric_h_version("#define FI_MAJOR_VERSION FOO\n#define FI_MINOR_VERSION 6\n"), "");
}

TEST(CudaVersionJson, ReadsCudaComponent) {
  EXPECT_EQ(parse_cuda_version_json(R"({"cuda":{"name":"CUDA SDK","version":"13.4.1"},"nvcc":{"version":"13.4.66"}})"),
            "13.4.1");
  EXPECT_EQ(parse_cuda_version_json("{not json"), "");
  EXPECT_EQ(parse_cuda_version_json(R"({"cuda":"13"})"), "");
}

TEST(LdSoConf, IncludesDirsAndComments) {
  auto items = parse_ld_so_conf("include /etc/ld.so.conf.d/*.conf\n# comment\n/opt/amazon/efa/lib  # efa\n"
                                "/a:/b,/c\nhwcap 1 nosegneg\n");
  EXPECT_EQ(items, (std::vector<LdConfItem>{{true, "/etc/ld.so.conf.d/*.conf"},
                                           {false, "/opt/amazon/efa/lib"},
                                           {false, "/a"},
                                           {false, "/b"},
                                           {false, "/c"}}));
}

TEST(EnvironmentFile, EnrootStyleAndTolerance) {
  EXPECT_EQ(parse_environment_file("PATH=/usr/local/mpi/bin:/usr/bin\nNCCL_NET_PLUGIN=ofi\n# c\n"
                                   "export A=\"x y\"\nnoequals\n=bad\n"),
            (std::vector<std::string>{"PATH=/usr/local/mpi/bin:/usr/bin", "NCCL_NET_PLUGIN=ofi", "A=x y"}));
}

TEST(SplitColon, DropsEmptyEntries) {
  EXPECT_EQ(split_colon("/a::/b:"), (std::vector<std::string>{"/a", "/b"}));
}

}  // namespace
}  // namespace trainimg::inspect::facts
