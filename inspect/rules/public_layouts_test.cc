// SPDX-License-Identifier: GPL-3.0-or-later
// Images laid out the way public training-image Dockerfiles lay them out,
// run through every image rule. Each fixture names the Dockerfile it copies
// the layout (paths, environment, loader config) of; the libraries are tiny
// ELF stand-ins. A legitimate layout must give only the findings seed 002
// defends.
#include <gtest/gtest.h>

#include <algorithm>

#include "inspect/rules/rule_test_util.h"

namespace trainimg::inspect::rules {
namespace {

using testing::elf_bytes;
using testing::ElfSpec;

std::vector<std::string> ids(const std::vector<Diagnostic>& ds) {
  std::vector<std::string> out;
  for (const auto& d : ds) out.push_back(d.rule_id + (d.severity == Severity::Warning ? "(warning)" : ""));
  std::sort(out.begin(), out.end());
  return out;
}

std::string all_messages(const std::vector<Diagnostic>& ds) {
  std::string s;
  for (const auto& d : ds) s += d.rule_id + ": " + d.message + "\n";
  return s;
}

// What efa_installer.sh -y -g --skip-kmod --skip-limit-conf --no-verify
// (1.43, Ubuntu 22.04) leaves on a CUDA base that had no EFA stack: the
// plugin as the libnccl-ofi deb installs it (libdir
// /opt/amazon/ofi-nccl/lib/x86_64-linux-gnu, its 100_ofinccl.conf, the
// libnccl-net.so link to libnccl-net-ofi.so), Open MPI 4 and 5.
testing::LayerSpec& efa_installer_on_cuda_base(testing::ImageSpec& img) {
  auto& l = img.layer();
  const std::string ofi = "/opt/amazon/ofi-nccl/lib/x86_64-linux-gnu";
  l.file("/opt/amazon/efa_installed_packages",
         "# EFA installer version: 1.43.2\n# Debug packages installed: no\n# Packages installed:\n"
         "ibverbs-providers_58.amzn0-1_amd64 libfabric1-aws_2.3.0amzn1.0_amd64 "
         "libfabric-aws-bin_2.3.0amzn1.0_amd64 "
         "libnccl-ofi_1.16.3-1_amd64 openmpi40-aws_4.1.8-1_amd64 openmpi50-aws_5.0.8-1_amd64\n")
      .file("/etc/ld.so.conf.d/efa.conf", "/opt/amazon/efa/lib\n")
      .file("/etc/ld.so.conf.d/100_ofinccl.conf", ofi + "/\n")
      .file("/opt/amazon/efa/lib/libfabric.so.1.26.0", testing::libfabric_elf("2.3.0amzn1.0"), 0755)
      .symlink("/opt/amazon/efa/lib/libfabric.so.1", "libfabric.so.1.26.0")
      .file(ofi + "/libnccl-net-ofi.so",
            testing::plugin_elf("1.16.3", {"ncclNetPlugin_v8", "ncclNetPlugin_v9"}), 0755)
      .symlink(ofi + "/libnccl-net.so", "libnccl-net-ofi.so")
      .file("/opt/amazon/openmpi/bin/mpirun", elf_bytes(ElfSpec().executable()), 0755)
      .file("/opt/amazon/openmpi/lib/libmpi.so.40.30.8", testing::libmpi_elf("4.1.8"), 0755)
      .symlink("/opt/amazon/openmpi/lib/libmpi.so.40", "libmpi.so.40.30.8")
      .file("/opt/amazon/openmpi5/bin/mpirun", elf_bytes(ElfSpec().executable()), 0755)
      .file("/opt/amazon/openmpi5/lib/libmpi.so.40.40.8", testing::libmpi_elf("5.0.8"), 0755)
      .symlink("/opt/amazon/openmpi5/lib/libmpi.so.40", "libmpi.so.40.40.8");
  return l;
}

// Ubuntu's loader configuration: ld.so.conf includes ld.so.conf.d, which
// names the multiarch directories.
testing::LayerSpec& ubuntu_ld_so_conf(testing::LayerSpec& l) {
  return l.file("/etc/ld.so.conf", "include /etc/ld.so.conf.d/*.conf\n")
      .file("/etc/ld.so.conf.d/x86_64-linux-gnu.conf",
            "/usr/local/lib/x86_64-linux-gnu\n/lib/x86_64-linux-gnu\n"
            "/usr/lib/x86_64-linux-gnu\n");
}

// nvidia/cuda:12.8.1-devel-ubuntu22.04: the cuda-compat-12-8 package's
// driver in /usr/local/cuda-12.8/compat, apt's libnccl2 in the multiarch dir.
testing::ImageSpec cuda_base() {
  testing::ImageSpec img;
  ubuntu_ld_so_conf(img.layer())
      .file("/usr/local/cuda-12.8/version.json", R"({"cuda" : {"name" : "CUDA SDK", "version" : "12.8.1"}})")
      .symlink("/usr/local/cuda", "cuda-12.8")
      .file("/usr/local/cuda-12.8/compat/libcuda.so.570.124.06", elf_bytes(ElfSpec().so("libcuda.so.1")),
            0755)
      .symlink("/usr/local/cuda-12.8/compat/libcuda.so.1", "libcuda.so.570.124.06");
  img.config.env = {
      "PATH=/usr/local/nvidia/bin:/usr/local/cuda/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin",
      "CUDA_VERSION=12.8.1", "LD_LIBRARY_PATH=/usr/local/nvidia/lib:/usr/local/nvidia/lib64"};
  return img;
}

// aws-samples/awsome-distributed-training micro-benchmarks/nccl-tests/
// nccl-tests.Dockerfile: CUDA base, EFA installer 1.43.2, NCCL built in
// /opt/nccl/build, aws-ofi-nccl 1.16.3 built into /opt/aws-ofi-nccl/install
// (libnccl-net.so), nccl-tests built against /opt/amazon/openmpi,
// NCCL_NET_PLUGIN unset, OPAL_PREFIX=/opt/amazon/openmpi.
TEST(PublicLayouts, AwsomeDistributedTrainingNcclTests) {
  auto img = cuda_base();
  efa_installer_on_cuda_base(img);
  img.layer()
      .file("/opt/nccl/build/lib/libnccl.so.2.27.7",
            elf_bytes(ElfSpec().so("libnccl.so.2").strings({"NCCL version 2.27.7+cuda12.8"})), 0755)
      .symlink("/opt/nccl/build/lib/libnccl.so.2", "libnccl.so.2.27.7")
      .file("/opt/aws-ofi-nccl/install/lib/libnccl-net-ofi.so",
            testing::plugin_elf("1.16.3", {"ncclNetPlugin_v8", "ncclNetPlugin_v9"}), 0755)
      .symlink("/opt/aws-ofi-nccl/install/lib/libnccl-net.so", "libnccl-net-ofi.so")
      .file("/opt/nccl-tests/build/all_reduce_perf",
            elf_bytes(ElfSpec().executable().needs({"libmpi.so.40"})), 0755);
  testing::set_env(
      img, "LD_LIBRARY_PATH",
      "/opt/gdrcopy/lib:/usr/local/cuda/extras/CUPTI/lib64:/opt/amazon/openmpi/lib:/opt/nccl/build/lib:"
      "/opt/amazon/efa/lib:/opt/aws-ofi-nccl/install/lib:/usr/local/lib:/usr/local/nvidia/lib");
  testing::set_env(img, "PATH",
                   "/opt/gdrcopy/bin:/opt/amazon/openmpi/bin/:/opt/amazon/efa/bin:/usr/bin:/usr/local/bin");
  testing::set_env(img, "OPAL_PREFIX", "/opt/amazon/openmpi");
  testing::set_env(img, "LD_PRELOAD", "/opt/nccl/build/lib/libnccl.so");
  auto f = testing::facts_of(img);
  ASSERT_TRUE(f.nccl_plugin);
  EXPECT_EQ(f.nccl_plugin->resolved, "/opt/aws-ofi-nccl/install/lib/libnccl-net-ofi.so");
  ASSERT_TRUE(f.nccl());
  EXPECT_EQ(f.nccl()->version, "2.27.7");
  ASSERT_EQ(f.libfabrics.size(), 1u);
  EXPECT_EQ(f.libfabrics[0].version, "2.3.0amzn1.0");
  // PATH, OPAL_PREFIX and the loader; /opt/nccl-tests/build is no bin/
  // directory, so its programs are not read (no run path there anyway).
  ASSERT_EQ(f.mpi_votes.size(), 3u);
  for (const auto& v : f.mpi_votes) EXPECT_EQ(v.prefix, "/opt/amazon/openmpi") << v.by;
  // The installer's own plugin directory is not in LD_LIBRARY_PATH (the
  // Dockerfile uses its own build): seed 002 pitfall ③ says to put it first.
  auto d = run_rule(kLdLibraryPathOrder, f);
  EXPECT_EQ(d.size(), 1u);
  std::vector<Diagnostic> all = check_image(f, {});
  EXPECT_EQ(ids(all), (std::vector<std::string>{"ld-library-path-order"})) << all_messages(all);
}

// aws/deep-learning-containers pytorch/training/docker/2.9/py3/cu130/
// Dockerfile.gpu on its EFA base: NCCL from the nvidia-nccl wheel (no release
// in the file name), the installer's plugin through
// /opt/amazon/ofi-nccl/lib/x86_64-linux-gnu in LD_LIBRARY_PATH after
// /usr/local/lib, NCCL_NET_PLUGIN unset, mpi4py built with the installer's
// mpicc (run path to /opt/amazon/openmpi/lib).
TEST(PublicLayouts, DeepLearningContainersPytorchTraining) {
  auto img = cuda_base();
  efa_installer_on_cuda_base(img);
  const std::string site = "/usr/local/lib/python3.12/site-packages";
  img.layer()
      .file(site + "/nvidia/nccl/lib/libnccl.so.2",
            elf_bytes(ElfSpec().so("libnccl.so.2").strings({"NCCL version 2.27.3+cuda12.9"})), 0755)
      .file(site + "/mpi4py/MPI.cpython-312-x86_64-linux-gnu.so",
            elf_bytes(ElfSpec()
                          .so("MPI.cpython-312-x86_64-linux-gnu.so")
                          .runpath({"/opt/amazon/openmpi/lib"})
                          .needs({"libmpi.so.40"})),
            0755);
  testing::set_env(img, "LD_LIBRARY_PATH",
                   "/usr/local/lib:/opt/amazon/ofi-nccl/lib/x86_64-linux-gnu:/opt/amazon/openmpi/lib:"
                   "/opt/amazon/efa/lib:/usr/local/cuda/lib64:/usr/local/nvidia/lib");
  testing::set_env(img, "PATH",
                   "/usr/local/bin:/opt/amazon/openmpi/bin:/opt/amazon/efa/bin:/usr/local/cuda/bin:/usr/bin");
  auto f = testing::facts_of(img);
  ASSERT_TRUE(f.nccl());
  EXPECT_EQ(f.nccl()->version, "2.27.3");
  ASSERT_TRUE(f.nccl_plugin);
  EXPECT_EQ(f.nccl_plugin->path, "/opt/amazon/ofi-nccl/lib/x86_64-linux-gnu/libnccl-net.so");
  ASSERT_EQ(f.plugins.size(), 1u);
  EXPECT_EQ(f.plugins[0].version, "1.16.3");
  std::vector<Diagnostic> all = check_image(f, {});
  EXPECT_TRUE(all.empty()) << all_messages(all);
}

// aws-samples/awsome-distributed-training 2.ami_and_containers/containers/
// pytorch/0.nvcr-pytorch-aws.dockerfile: an NGC base from before NGC carried
// an EFA stack (HPC-X's Open MPI removed), EFA installer 1.30 (no plugin
// package yet), aws-ofi-nccl 1.8.1-aws built with --prefix=/opt/amazon/efa,
// NCCL rebuilt into /usr/lib, Open MPI rebuilt into /opt/amazon/openmpi.
TEST(PublicLayouts, AwsomeDistributedTrainingNvcrPytorchAws) {
  testing::ImageSpec img;
  ubuntu_ld_so_conf(img.layer())
      .file("/usr/local/cuda-12.3/version.json", R"({"cuda" : {"name" : "CUDA SDK", "version" : "12.3.2"}})")
      .symlink("/usr/local/cuda", "cuda-12.3")
      .file("/usr/local/cuda-12.3/compat/lib.real/libcuda.so.545.23.08",
            elf_bytes(ElfSpec().so("libcuda.so.1")), 0755)
      .symlink("/usr/local/cuda-12.3/compat/lib.real/libcuda.so.1", "libcuda.so.545.23.08");
  img.layer()
      .file("/opt/amazon/efa_installed_packages",
            "# EFA installer version: 1.30.0\n# Debug packages installed: yes\n# Packages installed:\n"
            "libfabric1-aws_1.19.0amzn4.0_amd64 libfabric-aws-dbg_1.19.0amzn4.0_amd64 "
            "openmpi40-aws_4.1.6-1_amd64\n")
      .file("/etc/ld.so.conf.d/efa.conf", "/opt/amazon/efa/lib\n/opt/amazon/openmpi/lib\n")
      .file("/opt/amazon/efa/lib/libfabric.so.1.21.0", testing::libfabric_elf("1.19.0amzn4.0"), 0755)
      .symlink("/opt/amazon/efa/lib/libfabric.so.1", "libfabric.so.1.21.0")
      .file("/opt/amazon/efa/lib/libnccl-net.so",
            elf_bytes(ElfSpec()
                          .so("libnccl-net.so")
                          .exports({"ncclNetPlugin_v5", "ncclNetPlugin_v6", "ncclNetPlugin_v7"})
                          .strings({"NET/OFI Initializing aws-ofi-nccl 1.8.1-aws"})
                          .runpath({"/opt/amazon/efa/lib"})
                          .needs({"libfabric.so.1"})),
            0755)
      .file("/usr/lib/libnccl.so.2.19.3", elf_bytes(ElfSpec().so("libnccl.so.2")), 0755)
      .symlink("/usr/lib/libnccl.so.2", "libnccl.so.2.19.3")
      .file("/opt/amazon/openmpi/bin/mpirun", elf_bytes(ElfSpec().executable()), 0755)
      .file("/opt/amazon/openmpi/lib/libmpi.so.40.30.6", testing::libmpi_elf("4.1.6"), 0755)
      .symlink("/opt/amazon/openmpi/lib/libmpi.so.40", "libmpi.so.40.30.6")
      .file("/opt/amazon/openmpi/lib/pkgconfig/ompi.pc",
            testing::pc("/opt/amazon/openmpi", "Open MPI", "4.1.6"));
  img.config.env = {
      "PATH=/opt/amazon/efa/bin:/opt/amazon/openmpi/bin:/usr/local/mpi/bin:/usr/local/cuda/bin:/usr/bin",
      "CUDA_VERSION=12.3.2", "NCCL_VERSION=2.19.3-1", "OPAL_PREFIX=/opt/amazon/openmpi",
      "LD_LIBRARY_PATH=/usr/local/lib:/usr/local/cuda/lib64:/opt/amazon/efa/lib:"
      "/usr/local/cuda/compat/lib:/usr/local/nvidia/lib:/usr/local/nvidia/lib64"};
  auto f = testing::facts_of(img);
  ASSERT_TRUE(f.nccl_plugin);
  EXPECT_EQ(f.nccl_plugin->path, "/opt/amazon/efa/lib/libnccl-net.so");
  ASSERT_EQ(f.cudas.size(), 1u);
  EXPECT_EQ(f.cudas[0].compat_libs.size(), 2u);
  // A host on CUDA 12.2: forward compatibility, with the libraries present.
  auto all = check_image(f, parse_expect("cuda-driver=12.2"));
  EXPECT_EQ(ids(all), (std::vector<std::string>{"cuda-forward-compat"})) << all_messages(all);
  EXPECT_EQ(all[0].severity, Severity::Info);
}

// NGC PyTorch releases before Open MPI moved to /usr/local/mpi ship HPC-X:
// Open MPI in /opt/hpcx/ompi, OPAL_PREFIX=/opt/hpcx/ompi, its libraries in
// /etc/ld.so.conf.d/hpcx.conf, /usr/local/mpi/bin still on PATH (domain.md
// §2; awsome-distributed-training's Dockerfiles delete /opt/hpcx/ompi,
// /usr/local/mpi and hpcx.conf for that reason). Seed 002's installer layer
// and ENV on top: the installer's Open MPIs beside NGC's are expected and
// nothing selects them.
TEST(PublicLayouts, NgcWithHpcxOpenMpiAndTheInstaller) {
  testing::NgcOptions o;
  auto img = testing::ngc_image(o);
  auto& base = img.layers[0];
  std::erase_if(base.entries,
                [](const testing::SpecEntry& e) { return e.entry.path.starts_with("/usr/local/mpi"); });
  base.file("/opt/hpcx/ompi/bin/mpirun", elf_bytes(ElfSpec().executable()), 0755)
      .file("/opt/hpcx/ompi/lib/libmpi.so.40.30.7", testing::libmpi_elf("4.1.7"), 0755)
      .symlink("/opt/hpcx/ompi/lib/libmpi.so.40", "libmpi.so.40.30.7")
      .file("/opt/hpcx/ompi/lib/pkgconfig/ompi.pc", testing::pc("/opt/hpcx/ompi", "Open MPI", "4.1.7rc1"))
      .symlink("/usr/local/mpi", "/opt/hpcx/ompi")
      .file("/etc/ld.so.conf.d/hpcx.conf", "/opt/hpcx/ompi/lib\n/opt/hpcx/ucx/lib\n")
      .file("/usr/local/lib/python3.10/dist-packages/mpi4py/MPI.cpython-310-x86_64-linux-gnu.so",
            elf_bytes(ElfSpec().so("MPI.so").runpath({"/opt/hpcx/ompi/lib"}).needs({"libmpi.so.40"})), 0755);
  testing::set_env(img, "OPAL_PREFIX", "/opt/hpcx/ompi");
  auto f = testing::facts_of(img);
  ASSERT_EQ(f.mpis.size(), 3u);
  EXPECT_EQ(f.mpis[2].path, "/opt/hpcx/ompi");
  EXPECT_EQ(f.mpis[2].origin, "ngc");
  for (const auto& v : f.mpi_votes) EXPECT_EQ(v.prefix, "/opt/hpcx/ompi") << v.by << " " << v.detail;
  auto all = check_image(f, {});
  EXPECT_EQ(ids(all), (std::vector<std::string>{"mpi-multiple-installs(warning)"})) << all_messages(all);
  // A /usr/local/mpi deleted with HPC-X's Open MPI still on PATH changes nothing.
  img.layer().whiteout("/usr/local/mpi");
  auto g = testing::facts_of(img);
  for (const auto& v : g.mpi_votes) EXPECT_EQ(v.prefix, "/opt/hpcx/ompi") << v.by << " " << v.detail;
}

// An rpm-based image (Amazon Linux 2023) with the installer: everything in
// lib64 (libfabric-aws; aws-ofi-nccl's contrib/fedora/aws-ofi-nccl.spec
// installs %{_libdir} = /opt/amazon/ofi-nccl/lib64 and names it in
// 100_ofinccl.conf; the installer's Open MPI in /opt/amazon/openmpi/lib64),
// no dpkg status, an rpm-form manifest, LD_LIBRARY_PATH naming the lib64
// directories first.
TEST(PublicLayouts, RpmBasedImageWithLib64Directories) {
  testing::ImageSpec img;
  img.layer()
      .file("/etc/ld.so.conf", "include ld.so.conf.d/*.conf\n")
      .file("/usr/local/cuda-12.8/version.json", R"({"cuda" : {"name" : "CUDA SDK", "version" : "12.8.1"}})")
      .symlink("/usr/local/cuda", "cuda-12.8");
  img.layer()
      .file("/opt/amazon/efa_installed_packages",
            "# EFA installer version: 1.43.2\n# Debug packages installed: no\n# Packages installed:\n"
            "libfabric-aws-2.3.0amzn1.0-1.amzn2023.x86_64\nlibnccl-ofi-1.16.3-1.amzn2023.x86_64\n"
            "openmpi40-aws-4.1.8-1.amzn2023.x86_64\n")
      .file("/etc/ld.so.conf.d/efa.conf", "/opt/amazon/efa/lib64\n")
      .file("/etc/ld.so.conf.d/100_ofinccl.conf", "/opt/amazon/ofi-nccl/lib64\n")
      .file("/opt/amazon/efa/lib64/libfabric.so.1.26.0", testing::libfabric_elf("2.3.0amzn1.0"), 0755)
      .symlink("/opt/amazon/efa/lib64/libfabric.so.1", "libfabric.so.1.26.0")
      .file("/opt/amazon/ofi-nccl/lib64/libnccl-net-ofi.so",
            testing::plugin_elf("1.16.3", {"ncclNetPlugin_v8", "ncclNetPlugin_v9"}), 0755)
      .symlink("/opt/amazon/ofi-nccl/lib64/libnccl-net.so", "libnccl-net-ofi.so")
      .file("/opt/amazon/openmpi/bin/mpirun", elf_bytes(ElfSpec().executable()), 0755)
      .file("/opt/amazon/openmpi/lib64/libmpi.so.40.30.8", testing::libmpi_elf("4.1.8"), 0755)
      .symlink("/opt/amazon/openmpi/lib64/libmpi.so.40", "libmpi.so.40.30.8")
      .file("/usr/local/lib/python3.11/site-packages/nvidia/nccl/lib/libnccl.so.2",
            elf_bytes(ElfSpec().so("libnccl.so.2").strings({"NCCL version 2.27.3+cuda12.9"})), 0755);
  img.config.env = {
      "PATH=/opt/amazon/openmpi/bin:/opt/amazon/efa/bin:/usr/local/bin:/usr/bin", "CUDA_VERSION=12.8.1",
      "LD_LIBRARY_PATH=/opt/amazon/ofi-nccl/lib64:/opt/amazon/efa/lib64:/opt/amazon/openmpi/lib64"};
  auto f = testing::facts_of(img);
  ASSERT_EQ(f.libfabrics.size(), 1u);
  EXPECT_TRUE(f.libfabrics[0].efa_build);
  EXPECT_EQ(f.libfabrics[0].version, "2.3.0amzn1.0-1.amzn2023");
  ASSERT_EQ(f.plugins.size(), 1u);
  EXPECT_EQ(f.plugins[0].version, "1.16.3");
  ASSERT_EQ(f.mpis.size(), 1u);
  EXPECT_EQ(f.mpis[0].version, "4.1.8-1.amzn2023");
  const auto* fabric = f.loader_for("libfabric.so.1");
  ASSERT_TRUE(fabric && fabric->selected());
  EXPECT_EQ(fabric->selected()->resolved, "/opt/amazon/efa/lib64/libfabric.so.1.26.0");
  auto all = check_image(f, parse_expect("efa-installer=1.43.2,libfabric=2.3.0,aws-ofi-nccl=1.16.3"));
  EXPECT_TRUE(all.empty()) << all_messages(all);
}

}  // namespace
}  // namespace trainimg::inspect::rules
