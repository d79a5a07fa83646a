// SPDX-License-Identifier: GPL-3.0-or-later
// An NGC-PyTorch-like image with the EFA installer layered on top (seed 002
// "Validated environment"), built from nothing for tests: the layout, file
// names, manifest format, pkg-config files, ld.so.conf.d entries and
// environment are faithful; every library is a tiny real ELF compiled with
// gcc (right soname, ncclNetPlugin_vN exports, version strings in .rodata,
// run paths). Tests using it say "NgcLike" in their names. Header-only.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "inspect/elf/elf_fixture_test_util.h"
#include "inspect/facts/gather.h"
#include "inspect/testing/daemon_image.h"
#include "inspect/testing/image_builder.h"

namespace trainimg::inspect::testing {

struct NgcOptions {
  bool installer = true;  ///< add the EFA installer layer (1.50.0)
  std::string installer_version = "1.50.0";
  std::string base_libfabric = "2.4.0", installer_libfabric = "2.6.0amzn1.0";
  std::string base_ofi = "1.19.0", installer_ofi = "1.21.1";
  std::vector<std::string> base_ofi_apis = {"ncclNetPlugin_v8", "ncclNetPlugin_v9", "ncclNetPlugin_v10"};
  std::vector<std::string> installer_ofi_apis = {"ncclNetPlugin_v8", "ncclNetPlugin_v9", "ncclNetPlugin_v10",
                                                 "ncclNetPlugin_v11", "ncclNetPlugin_v12"};
  std::string nccl = "2.30.7";
  std::string cuda = "13.4.1";
  bool compat_libs = true;
};

inline std::string plugin_elf(const std::string& version, const std::vector<std::string>& apis) {
  std::vector<std::string> exports = apis;
  exports.push_back("ncclTunerPlugin_v3");
  return elf_bytes(ElfSpec()
                       .so("libnccl-net-ofi.so")
                       .exports(exports)
                       .strings({"NET/OFI Initializing aws-ofi-nccl " + version})
                       .runpath({"/opt/amazon/efa/lib"})
                       .needs({"libfabric.so.1"}));
}

inline std::string libfabric_elf(const std::string& tag) {
  // The tag only makes the two builds differ; the .so name is no version.
  return elf_bytes(ElfSpec().so("libfabric.so.1").exports({"fi_getinfo"}).strings({"libfabric build " + tag}));
}

inline std::string libmpi_elf(const std::string& tag) {
  return elf_bytes(ElfSpec().so("libmpi.so.40").exports({"MPI_Init"}).strings({"Open MPI " + tag}));
}

inline std::string pc(const std::string& prefix, const std::string& name, const std::string& version) {
  return "prefix=" + prefix + "\nlibdir=${prefix}/lib\n\nName: " + name + "\nDescription: " + name +
         "\nVersion: " + version + "\nLibs: -L${libdir}\n";
}

inline void set_env(ImageSpec& img, const std::string& key, const std::optional<std::string>& value) {
  auto& env = img.config.env;
  std::erase_if(env, [&](const std::string& kv) { return kv.starts_with(key + "="); });
  if (value) env.push_back(key + "=" + *value);
}

inline std::optional<std::string> get_env(const ImageSpec& img, const std::string& key) {
  for (const auto& kv : img.config.env)
    if (kv.starts_with(key + "=")) return kv.substr(key.size() + 1);
  return std::nullopt;
}

inline ImageSpec ngc_image(const NgcOptions& o = {}) {
  ImageSpec img;
  auto& base = img.layer();
  base.dir("/etc")
      .file("/etc/ld.so.conf", "include /etc/ld.so.conf.d/*.conf\n\n")
      .file("/etc/ld.so.conf.d/x86_64-linux-gnu.conf",
            "# Multiarch support\n/usr/local/lib/x86_64-linux-gnu\n/lib/x86_64-linux-gnu\n/usr/lib/x86_64-linux-gnu\n")
      .file("/etc/ld.so.conf.d/efa.conf", "/opt/amazon/efa/lib\n")
      .file("/etc/ld.so.conf.d/100_ofinccl.conf", "/opt/amazon/ofi-nccl/lib\n")
      .file("/etc/environment", "")
      .file("/opt/amazon/efa/lib/libfabric.so.1.27.0", libfabric_elf(o.base_libfabric), 0755)
      .symlink("/opt/amazon/efa/lib/libfabric.so.1", "libfabric.so.1.27.0")
      .file("/opt/amazon/efa/lib/pkgconfig/libfabric.pc", pc("/opt/amazon/efa", "libfabric", o.base_libfabric))
      .file("/opt/amazon/ofi-nccl/lib/libnccl-net-ofi.so", plugin_elf(o.base_ofi, o.base_ofi_apis), 0755)
      .file("/usr/lib/x86_64-linux-gnu/libnccl.so." + o.nccl,
            elf_bytes(ElfSpec().so("libnccl.so.2").exports({"ncclGetVersion"}).strings({"NCCL version " + o.nccl + "+cuda13.4"})),
            0755)
      .symlink("/usr/lib/x86_64-linux-gnu/libnccl.so.2", "libnccl.so." + o.nccl)
      .file("/usr/local/mpi/bin/mpirun", elf_bytes(ElfSpec().executable()), 0755)
      .file("/usr/local/mpi/lib/libmpi.so.40.40.7", libmpi_elf("5.0.7"), 0755)
      .symlink("/usr/local/mpi/lib/libmpi.so.40", "libmpi.so.40.40.7")
      .file("/usr/local/mpi/lib/pkgconfig/ompi.pc", pc("/usr/local/mpi", "Open MPI", "5.0.7"))
      .file("/usr/local/cuda-13.4/version.json",
            R"({"cuda" : {"name" : "CUDA SDK", "version" : ")" + o.cuda + R"("}, "nvcc" : {"version" : "13.4.66"}})")
      .symlink("/usr/local/cuda", "cuda-13.4");
  if (o.compat_libs)
    base.file("/usr/local/cuda-13.4/compat/libcuda.so.595.45.04", elf_bytes(ElfSpec().so("libcuda.so.1")), 0755)
        .symlink("/usr/local/cuda-13.4/compat/libcuda.so.1", "libcuda.so.595.45.04");
  img.config.env = {"PATH=/usr/local/mpi/bin:/usr/local/nvidia/bin:/usr/local/cuda/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
                    "CUDA_VERSION=" + o.cuda,
                    "NCCL_VERSION=" + o.nccl,
                    "LD_LIBRARY_PATH=/usr/local/cuda/compat/lib:/usr/local/nvidia/lib:/usr/local/nvidia/lib64",
                    "NCCL_NET_PLUGIN=ofi",
                    "NCCL_TUNER_PLUGIN=ofi"};
  if (!o.installer) return img;
  // What efa_installer.sh -y -g --skip-kmod --skip-limit-conf --no-verify
  // leaves on an NGC base, then the Dockerfile's ENV LD_LIBRARY_PATH.
  auto& inst = img.layer();
  inst.file("/opt/amazon/efa_installed_packages",
            "# EFA installer version: " + o.installer_version +
                "\n# Debug packages installed: no\n# Packages installed:\n"
                "ibverbs-providers_58.0-1_amd64 libfabric1-aws_" + o.installer_libfabric +
                "_amd64 libfabric-aws-bin_" + o.installer_libfabric + "_amd64 libfabric-aws-dev_" +
                o.installer_libfabric + "_amd64 libnccl-ofi-ngc-v3_" + o.installer_ofi +
                "-1_amd64 openmpi40-aws_4.1.7-1_amd64 openmpi50-aws_5.0.9-1_amd64 libpmix-aws_4.2.8_amd64\n")
      .file("/opt/amazon/efa/lib/libfabric.so.1.27.0", libfabric_elf(o.installer_libfabric), 0755)
      .file("/opt/amazon/efa/lib/pkgconfig/libfabric.pc", pc("/opt/amazon/efa", "libfabric", o.installer_libfabric))
      .file("/opt/amazon/ofi-nccl/lib/libnccl-net-ofi.so", plugin_elf(o.installer_ofi, o.installer_ofi_apis), 0755)
      .file("/opt/amazon/openmpi/bin/mpirun", elf_bytes(ElfSpec().executable()), 0755)
      .file("/opt/amazon/openmpi/lib/libmpi.so.40.30.7", libmpi_elf("4.1.7"), 0755)
      .symlink("/opt/amazon/openmpi/lib/libmpi.so.40", "libmpi.so.40.30.7")
      .file("/opt/amazon/openmpi5/bin/mpirun", elf_bytes(ElfSpec().executable()), 0755)
      .file("/opt/amazon/openmpi5/lib/libmpi.so.40.40.9", libmpi_elf("5.0.9"), 0755)
      .symlink("/opt/amazon/openmpi5/lib/libmpi.so.40", "libmpi.so.40.40.9");
  set_env(img, "LD_LIBRARY_PATH", "/opt/amazon/ofi-nccl/lib:/opt/amazon/efa/lib:" + *get_env(img, "LD_LIBRARY_PATH"));
  return img;
}

enum class FixtureKind {
  Dir,
  DockerArchive,
  DockerArchiveLegacyGzip,
  OciGzip,
  OciZstdManifestList,
  OciArchive,  ///< an OCI layout in one tar (`tar -C DIR -cf`), opened by its bare path
  SqshLzoNoD,
  SqshGzip,
  Memory,
  Dockerd,  ///< loaded into the real daemon, read back as dockerd://TAG
};

inline std::string to_string(FixtureKind k) {
  switch (k) {
    case FixtureKind::Dir: return "Dir";
    case FixtureKind::DockerArchive: return "DockerArchive";
    case FixtureKind::DockerArchiveLegacyGzip: return "DockerArchiveLegacyGzip";
    case FixtureKind::OciGzip: return "OciGzip";
    case FixtureKind::OciZstdManifestList: return "OciZstdManifestList";
    case FixtureKind::OciArchive: return "OciArchive";
    case FixtureKind::SqshLzoNoD: return "SqshLzoNoD";
    case FixtureKind::SqshGzip: return "SqshGzip";
    case FixtureKind::Memory: return "Memory";
    case FixtureKind::Dockerd: return "Dockerd";
  }
  return "?";
}

/// Why `kind` cannot be written on this machine (Dockerd with no daemon
/// socket), or nullopt. Tests skip with it:
///   if (auto why = unavailable(kind)) GTEST_SKIP() << *why;
inline std::optional<std::string> unavailable(FixtureKind kind) {
  return kind == FixtureKind::Dockerd ? docker_daemon_unavailable() : std::nullopt;
}

/// Writes the image as `kind` (plus the /etc/environment enroot would write
/// from the config Env, so config-less kinds see the same environment) and
/// gathers its facts. Dockerd loads it into the daemon under a tag of its own
/// (daemon_image.h) and removes it again before returning.
inline facts::ImageFacts facts_of(ImageSpec img, FixtureKind kind = FixtureKind::Dir) {
  std::string env;
  for (const auto& kv : img.config.env) env += kv + "\n";
  img.layer().file("/etc/environment", env);
  TempDir t;
  std::optional<DaemonImage> loaded;  // outlives src; removed from the daemon even on failure
  std::unique_ptr<ImageSource> src;
  switch (kind) {
    case FixtureKind::Dir:
      write_rootfs(img, t / "rootfs");
      src = open_source("dir:" + (t / "rootfs"));
      break;
    case FixtureKind::DockerArchive:
      write_docker_archive(img, t / "img.tar");
      src = open_source("docker-archive:" + (t / "img.tar"));
      break;
    case FixtureKind::DockerArchiveLegacyGzip:
      write_docker_archive(img, t / "img.tar", ArchiveLayout::Legacy, Compression::Gzip);
      src = open_source("docker-archive:" + (t / "img.tar"));
      break;
    case FixtureKind::OciGzip:
      write_oci_layout(img, t / "oci", OciOptions{Compression::Gzip, false});
      src = open_source("oci:" + (t / "oci"));
      break;
    case FixtureKind::OciZstdManifestList:
      write_oci_layout(img, t / "oci", OciOptions{Compression::Zstd, true});
      src = open_source("oci:" + (t / "oci") + ":latest");
      break;
    case FixtureKind::OciArchive: {
      write_oci_layout(img, t / "oci", OciOptions{Compression::Gzip, false});
      std::string cmd = "tar -C '" + (t / "oci") + "' -cf '" + (t / "img.tar") + "' .";
      if (std::system(cmd.c_str()) != 0) throw std::runtime_error("tar failed: " + cmd);
      src = open_source(t / "img.tar");
      break;
    }
    case FixtureKind::SqshLzoNoD:
    case FixtureKind::SqshGzip: {
      // What enroot import runs (domain.md §4), with the real mksquashfs.
      write_rootfs(img, t / "rootfs");
      std::string comp = kind == FixtureKind::SqshLzoNoD ? "-comp lzo -noD" : "-comp gzip";
      std::string cmd = "mksquashfs '" + (t / "rootfs") + "' '" + (t / "img.sqsh") + "' " + comp +
                        " -all-root -quiet -no-progress >/dev/null 2>&1";
      if (std::system(cmd.c_str()) != 0) throw std::runtime_error("mksquashfs failed: " + cmd);
      src = open_source(t / "img.sqsh");
      break;
    }
    case FixtureKind::Memory: src = memory_source(img); break;
    case FixtureKind::Dockerd:
      loaded.emplace(img);
      src = open_source("dockerd://" + loaded->tag());
      break;
  }
  return facts::gather_facts(*src);
}

}  // namespace trainimg::inspect::testing
