// SPDX-License-Identifier: GPL-3.0-or-later
// End-to-end: the trainimg binary on a dir: rootfs shaped like an NGC image
// with the EFA installer (files written and ELF libraries compiled with gcc
// here, at test time).
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "tests/cli_test_util.h"

namespace {

using trainimg::testing::put;
using trainimg::testing::slurp;

namespace fs = std::filesystem;

using CliRun = trainimg::testing::SplitResult;

class InspectCli : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / "trainimg-inspect-cli-XXXXXX").string();
    ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
    root_ = dir_ / "rootfs";
    build_rootfs();
  }
  void TearDown() override { fs::remove_all(dir_); }

  void cc(const fs::path& out, const std::string& source, const std::string& flags) {
    fs::create_directories(out.parent_path());
    put(dir_ / "src.c", source);
    std::string cmd = "gcc -shared -fPIC -o '" + out.string() + "' '" + (dir_ / "src.c").string() + "' " + flags;
    ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  }

  // NGC-like layout (seed 002): installer manifest, libfabric + .pc, the
  // aws-ofi-nccl plugin, NCCL, NGC's and the installer's Open MPI, and the
  // /etc/environment enroot would write.
  void build_rootfs() {
    put(root_ / "opt/amazon/efa_installed_packages",
        "# EFA installer version: 1.50.0\n# Debug packages installed: no\n"
        "libfabric1-aws_2.6.0amzn1.0_amd64 libnccl-ofi-ngc-v3_1.21.1-1_amd64 openmpi40-aws_4.1.7-1_amd64\n");
    cc(root_ / "opt/amazon/efa/lib/libfabric.so.1", "int fi_getinfo = 1;\n", "-Wl,-soname,libfabric.so.1");
    put(root_ / "opt/amazon/efa/lib/pkgconfig/libfabric.pc", "Name: libfabric\nVersion: 2.6.0amzn1.0\n");
    cc(root_ / "opt/amazon/ofi-nccl/lib/libnccl-net-ofi.so",
       "int ncclNetPlugin_v8 = 1; int ncclNetPlugin_v9 = 1;\n"
       "__attribute__((used)) static const char s[] = \"NET/OFI Initializing aws-ofi-nccl 1.21.1\";\n",
       "-Wl,-soname,libnccl-net-ofi.so '-Wl,-rpath,/opt/amazon/efa/lib' -Wl,--enable-new-dtags");
    cc(root_ / "usr/lib/x86_64-linux-gnu/libnccl.so.2.30.7", "int ncclGetVersion = 1;\n", "-Wl,-soname,libnccl.so.2");
    fs::create_symlink("libnccl.so.2.30.7", root_ / "usr/lib/x86_64-linux-gnu/libnccl.so.2");
    for (const char* prefix : {"usr/local/mpi", "opt/amazon/openmpi"}) {
      put(root_ / prefix / "bin/mpirun", "#!/bin/sh\n");
      cc(root_ / prefix / "lib/libmpi.so.40", "int MPI_Init = 1;\n", "-Wl,-soname,libmpi.so.40");
    }
    put(root_ / "usr/local/mpi/lib/pkgconfig/ompi.pc", "Version: 5.0.7\n");
    put(root_ / "etc/ld.so.conf", "include /etc/ld.so.conf.d/*.conf\n");
    put(root_ / "etc/ld.so.conf.d/efa.conf", "/opt/amazon/efa/lib\n");
    put(root_ / "etc/environment",
        "PATH=/usr/local/mpi/bin:/usr/bin:/bin\n"
        "LD_LIBRARY_PATH=/opt/amazon/ofi-nccl/lib:/opt/amazon/efa/lib:/usr/local/cuda/compat/lib\n"
        "NCCL_NET_PLUGIN=ofi\n");
  }

  CliRun trainimg(const std::string& args) {
    return trainimg::testing::sh_split(std::string(TRAINIMG_BIN) + " " + args, dir_);
  }

  std::string src() const { return "dir:" + root_.string(); }

  fs::path dir_, root_;
};

TEST_F(InspectCli, NgcLikeRootfsJsonFactsAndExpectedMpiNote) {
  CliRun r = trainimg("inspect " + src() + " --format json");
  ASSERT_EQ(r.rc, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["schema"], "trainimg.inspect/v1");
  const auto& f = j["facts"];
  EXPECT_EQ(f["efa_installer"]["version"], "1.50.0");
  EXPECT_EQ(f["libfabric"][0]["version"], "2.6.0amzn1.0");
  EXPECT_EQ(f["aws_ofi_nccl"][0]["version"], "1.21.1");
  EXPECT_EQ(f["aws_ofi_nccl"][0]["net_plugin_apis"], nlohmann::json::array({8, 9}));
  EXPECT_EQ(f["nccl"][0]["version"], "2.30.7");
  EXPECT_EQ(f["environment"]["from"], "/etc/environment");
  EXPECT_EQ(f["mpi_selection"]["selected"], "/usr/local/mpi");
  EXPECT_EQ(f["loader_order"][0]["library"], "libfabric.so.1");
  EXPECT_EQ(f["loader_order"][0]["selected"], "/opt/amazon/efa/lib/libfabric.so.1");
  ASSERT_EQ(j["findings"].size(), 1u) << j["findings"].dump(1);
  EXPECT_EQ(j["findings"][0]["rule"], "mpi-multiple-installs");
  EXPECT_EQ(j["findings"][0]["severity"], "warning");
}

TEST_F(InspectCli, HostMismatchFailsAndFailOnNeverPasses) {
  CliRun r = trainimg("inspect " + src() + " --expect efa-installer=1.47.0,aws-ofi-nccl=1.21.1");
  EXPECT_EQ(r.rc, 1);
  EXPECT_NE(r.out.find(src() + ": error: image EFA installer 1.50.0 differs from the host's 1.47.0 (--expect) "
                               "[efa-host-mismatch]\n  in image: /opt/amazon/efa_installed_packages (layer dir)\n"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("\nEFA installer              1.50.0  /opt/amazon/efa_installed_packages  (layer dir)\n"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("1 error, 1 warning, 0 notes\n"), std::string::npos) << r.out;
  EXPECT_EQ(trainimg("inspect " + src() + " --expect efa-installer=1.47.0 --fail-on never").rc, 0);
}

TEST_F(InspectCli, HostProfileAndJunitReportFile) {
  put(dir_ / "host.json", R"({"schema": "trainimg.host/v1", "facts": {"efa_installer_version": "1.50.0",
                            "libfabric_version": "2.4.0", "cuda_driver_version": "13.2"}})");
  std::string report = (dir_ / "junit.xml").string();
  CliRun r = trainimg("inspect " + src() + " --host " + (dir_ / "host.json").string() + " --format junit -o " + report);
  EXPECT_EQ(r.rc, 1) << r.err;
  EXPECT_EQ(r.out, "");
  std::string xml = slurp(report);
  EXPECT_NE(xml.find("libfabric-host-mismatch"), std::string::npos);
  EXPECT_NE(xml.find("mpi-conflict"), std::string::npos);  // one test case per rule, passing ones too
}

TEST_F(InspectCli, SarifNamesTheImageAsArtifact) {
  CliRun r = trainimg("inspect " + src() + " --expect libfabric=2.4.0 --format sarif");
  EXPECT_EQ(r.rc, 1);
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["version"], "2.1.0");
  EXPECT_NE(r.out.find(root_.string()), std::string::npos);
}

TEST_F(InspectCli, BadExpectIsAUsageErrorAndWritesNothing) {
  std::string report = (dir_ / "report.json").string();
  CliRun r = trainimg("inspect " + src() + " --expect nccl=2.30.7 -o " + report);
  EXPECT_EQ(r.rc, 2);
  EXPECT_EQ(r.err.substr(0, r.err.find('\n')), "--expect:1:1: error: unknown key 'nccl'");
  EXPECT_FALSE(fs::exists(report));
}

TEST_F(InspectCli, UnknownHostSchemaAndMissingImageExitTwo) {
  put(dir_ / "host.json", R"({"schema": "trainimg.host/v2"})");
  CliRun r = trainimg("inspect " + src() + " --host " + (dir_ / "host.json").string());
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find("trainimg.host/v2"), std::string::npos) << r.err;
  CliRun m = trainimg("inspect dir:" + (dir_ / "nope").string());
  EXPECT_EQ(m.rc, 2);
  EXPECT_EQ(m.out, "");
}

}  // namespace
