// SPDX-License-Identifier: GPL-3.0-or-later
#include "inspect/facts/gather.h"

#include <gtest/gtest.h>

#include "inspect/facts/ngc_fixture_test_util.h"
#include "inspect/inspect.h"

namespace trainimg::inspect::facts {
namespace {

using testing::facts_of;
using testing::FixtureKind;
using testing::ngc_image;

TEST(GatherFacts, NgcLikeImageWithInstallerAllComponents) {
  ImageFacts f = facts_of(ngc_image());
  EXPECT_EQ(f.kind, "dir");
  EXPECT_EQ(f.env_from, "/etc/environment");
  ASSERT_TRUE(f.installer);
  EXPECT_EQ(f.installer->version, "1.50.0");
  EXPECT_EQ(f.installer->packages.size(), 8u);
  ASSERT_EQ(f.libfabrics.size(), 1u);
  EXPECT_EQ(f.libfabrics[0].path, "/opt/amazon/efa/lib/libfabric.so.1.27.0");
  EXPECT_EQ(f.libfabrics[0].version, "2.6.0amzn1.0");
  EXPECT_EQ(f.libfabrics[0].version_from, "/opt/amazon/efa/lib/pkgconfig/libfabric.pc");
  EXPECT_TRUE(f.libfabrics[0].efa_build);
  ASSERT_EQ(f.plugins.size(), 1u);
  EXPECT_EQ(f.plugins[0].version, "1.21.1");
  EXPECT_EQ(f.plugins[0].net_apis, (std::vector<int>{8, 9, 10, 11, 12}));
  EXPECT_TRUE(f.plugins[0].aws_ofi_nccl);
  ASSERT_EQ(f.nccls.size(), 1u);
  EXPECT_EQ(f.nccls[0].version, "2.30.7");
  EXPECT_EQ(f.nccls[0].version_from, "file name");
  ASSERT_EQ(f.cudas.size(), 1u);
  EXPECT_EQ(f.cudas[0].version, "13.4.1");
  EXPECT_EQ(f.cudas[0].path, "/usr/local/cuda-13.4");
  EXPECT_EQ(f.cudas[0].compat_libs, (std::vector<std::string>{"/usr/local/cuda-13.4/compat/libcuda.so.1",
                                                             "/usr/local/cuda-13.4/compat/libcuda.so.595.45.04"}));
  ASSERT_EQ(f.mpis.size(), 3u);
  EXPECT_EQ(f.mpis[0].path, "/opt/amazon/openmpi");
  EXPECT_EQ(f.mpis[0].version, "4.1.7-1");
  EXPECT_EQ(f.mpis[0].origin, "efa-installer");
  EXPECT_EQ(f.mpis[1].path, "/opt/amazon/openmpi5");
  EXPECT_EQ(f.mpis[2].path, "/usr/local/mpi");
  EXPECT_EQ(f.mpis[2].version, "5.0.7");
  EXPECT_EQ(f.mpis[2].origin, "ngc");
}

TEST(GatherFacts, NgcLikeLoaderOrderAndNcclPlugin) {
  ImageFacts f = facts_of(ngc_image());
  const auto* fabric = f.loader_for("libfabric.so.1");
  ASSERT_TRUE(fabric && fabric->selected());
  EXPECT_EQ(fabric->requester, "/opt/amazon/ofi-nccl/lib/libnccl-net-ofi.so");
  // LD_LIBRARY_PATH first, then the plugin's RUNPATH (same file, deduplicated), then efa.conf.
  EXPECT_EQ(fabric->selected()->path, "/opt/amazon/efa/lib/libfabric.so.1");
  EXPECT_EQ(fabric->selected()->how, "LD_LIBRARY_PATH");
  EXPECT_EQ(fabric->selected()->resolved, "/opt/amazon/efa/lib/libfabric.so.1.27.0");
  EXPECT_EQ(f.nccl_plugin_names, (std::vector<std::string>{"ofi", "libnccl-net-ofi.so"}));
  ASSERT_TRUE(f.nccl_plugin);
  EXPECT_EQ(f.nccl_plugin->resolved, "/opt/amazon/ofi-nccl/lib/libnccl-net-ofi.so");
  ASSERT_EQ(f.ld_so_conf.size(), 5u);
  EXPECT_EQ(f.ld_so_conf[0].dir, "/opt/amazon/ofi-nccl/lib");
  EXPECT_EQ(f.ld_so_conf[0].how, "/etc/ld.so.conf.d/100_ofinccl.conf");
  EXPECT_EQ(f.ld_so_conf[1].dir, "/opt/amazon/efa/lib");
  const auto* mpi = f.loader_for("libmpi.so.40");
  ASSERT_TRUE(mpi);
  EXPECT_TRUE(mpi->candidates.empty());
  ASSERT_EQ(f.mpi_votes.size(), 1u);
  EXPECT_EQ(f.mpi_votes[0].by, "PATH");
  EXPECT_EQ(f.mpi_votes[0].prefix, "/usr/local/mpi");
}

// NGC images keep the forward-compat driver in compat/lib.real, with
// compat/lib a link to it (seen in NGC PyTorch's LD_LIBRARY_PATH and in
// TRITON_LIBCUDA_PATH=/usr/local/cuda/compat/lib.real used with them).
TEST(GatherFacts, NgcLikeCompatLibsInLibRealAreFound) {
  testing::NgcOptions o;
  o.compat_libs = false;
  auto img = ngc_image(o);
  img.layer()
      .file("/usr/local/cuda-13.4/compat/lib.real/libcuda.so.595.45.04",
            testing::elf_bytes(testing::ElfSpec().so("libcuda.so.1")), 0755)
      .symlink("/usr/local/cuda-13.4/compat/lib.real/libcuda.so.1", "libcuda.so.595.45.04")
      .symlink("/usr/local/cuda-13.4/compat/lib", "lib.real");
  ImageFacts f = facts_of(img);
  ASSERT_EQ(f.cudas.size(), 1u);
  EXPECT_EQ(f.cudas[0].compat_libs,
            (std::vector<std::string>{"/usr/local/cuda-13.4/compat/lib.real/libcuda.so.1",
                                      "/usr/local/cuda-13.4/compat/lib.real/libcuda.so.595.45.04"}));
}

// awsome-distributed-training's nccl-tests.Dockerfile (and older mosaicml
// images) pin NCCL with LD_PRELOAD; the base's apt libnccl2 is what the
// search alone would find.
TEST(GatherFacts, LdPreloadedNcclIsTheOneLoaded) {
  testing::NgcOptions o;
  o.nccl = "2.15.5";
  auto img = ngc_image(o);
  img.layer()
      .file(
          "/opt/nccl/build/lib/libnccl.so.2.27.7",
          testing::elf_bytes(testing::ElfSpec().so("libnccl.so.2").strings({"NCCL version 2.27.7+cuda12.8"})),
          0755)
      .symlink("/opt/nccl/build/lib/libnccl.so.2", "libnccl.so.2.27.7")
      .symlink("/opt/nccl/build/lib/libnccl.so", "libnccl.so.2");
  testing::set_env(img, "LD_PRELOAD", "/opt/nccl/build/lib/libnccl.so");
  ImageFacts f = facts_of(img);
  const auto* order = f.loader_for("libnccl.so.2");
  ASSERT_TRUE(order && order->selected());
  EXPECT_EQ(order->selected()->path, "/opt/nccl/build/lib/libnccl.so");
  EXPECT_EQ(order->selected()->how, "LD_PRELOAD");
  ASSERT_EQ(order->candidates.size(), 2u);
  EXPECT_EQ(order->candidates[1].resolved, "/usr/lib/x86_64-linux-gnu/libnccl.so.2.15.5");
  ASSERT_TRUE(f.nccl());
  EXPECT_EQ(f.nccl()->version, "2.27.7");
}

// Debian's mpich: /usr/bin/mpirun (an alternative) and libmpi.so.12 beside
// libmpich.so.12, no libopen-pal: not an Open MPI installation.
TEST(GatherFacts, MpichIsNoOpenMpiInstallation) {
  testing::NgcOptions o;
  o.installer = false;
  auto img = ngc_image(o);
  img.layer()
      .symlink("/usr/bin/mpirun", "/etc/alternatives/mpirun")
      .symlink("/etc/alternatives/mpirun", "/usr/bin/mpirun.mpich")
      .file("/usr/bin/mpirun.mpich", testing::elf_bytes(testing::ElfSpec().executable()), 0755)
      .file("/usr/lib/x86_64-linux-gnu/libmpich.so.12.1.10",
            testing::elf_bytes(testing::ElfSpec().so("libmpich.so.12")), 0644)
      .symlink("/usr/lib/x86_64-linux-gnu/libmpi.so.12", "libmpich.so.12.1.10");
  ImageFacts f = facts_of(img);
  ASSERT_EQ(f.mpis.size(), 1u);
  EXPECT_EQ(f.mpis[0].path, "/usr/local/mpi");
  // Open MPI 1.10 had the same libmpi.so.12: its libopen-pal tells them apart.
  img.layer().file("/usr/lib/x86_64-linux-gnu/libopen-pal.so.13.0.2",
                   testing::elf_bytes(testing::ElfSpec().so("libopen-pal.so.13")), 0644);
  EXPECT_EQ(facts_of(img).mpis.size(), 2u);
}

TEST(GatherFacts, NgcLikeWithoutInstallerUsesBaseStack) {
  testing::NgcOptions o;
  o.installer = false;
  ImageFacts f = facts_of(ngc_image(o));
  EXPECT_FALSE(f.installer);
  ASSERT_EQ(f.libfabrics.size(), 1u);
  EXPECT_EQ(f.libfabrics[0].version, "2.4.0");
  ASSERT_EQ(f.plugins.size(), 1u);
  EXPECT_EQ(f.plugins[0].version, "1.19.0");
  EXPECT_EQ(f.mpis.size(), 1u);
}

// Debian's openmpi-bin 4.1.4 owns /usr/bin/mpirun and libmpi.so.40.30.x:
// its version is the package's upstream version, not the libtool series "4.1".
TEST(GatherFacts, DistributionOpenMpiVersionComesFromDpkgStatus) {
  testing::ImageSpec img;
  img.layer()
      .file("/usr/bin/mpirun", testing::elf_bytes(testing::ElfSpec().executable()), 0755)
      .file("/usr/lib/x86_64-linux-gnu/libmpi.so.40.30.4", testing::libmpi_elf("4.1.4"), 0755)
      .symlink("/usr/lib/x86_64-linux-gnu/libmpi.so.40", "libmpi.so.40.30.4")
      .file("/var/lib/dpkg/status",
            "Package: openmpi-bin\nStatus: install ok installed\nVersion: 4.1.4-3+b1\n\n"
            "Package: libopenmpi3\nStatus: install ok installed\nVersion: 4.1.4-3+b1\n\n");
  ImageFacts f = facts_of(img);
  ASSERT_EQ(f.mpis.size(), 1u);
  EXPECT_EQ(f.mpis[0].path, "/usr");
  EXPECT_EQ(f.mpis[0].version, "4.1.4");
  EXPECT_EQ(f.mpis[0].version_from, "dpkg status (openmpi-bin 4.1.4-3+b1)");
  EXPECT_EQ(f.mpis[0].origin, "distribution");
}

// A later layer deleting the EFA libraries: the final view lacks them and
// the facts name the deleting layer.
TEST(GatherFacts, RemovedEfaLibrariesNameTheDeletingLayer) {
  auto img = ngc_image();
  img.layer().whiteout("/opt/amazon/efa/lib/libfabric.so.1.27.0");
  ImageFacts f = facts_of(img, FixtureKind::DockerArchive);
  EXPECT_TRUE(f.libfabrics.empty());
  ASSERT_EQ(f.removed.size(), 1u);
  EXPECT_EQ(f.removed[0].path, "/opt/amazon/efa/lib/libfabric.so.1.27.0");
  EXPECT_EQ(f.removed[0].removed_by, f.layers[2]);
  EXPECT_EQ(f.removed[0].layer, f.layers[1]);
}

TEST(GatherFacts, SqshEnvironmentIsEnrootsEtcEnvironment) {
  ImageFacts f = facts_of(ngc_image(), FixtureKind::SqshLzoNoD);
  EXPECT_EQ(f.kind, "sqsh");
  EXPECT_EQ(f.env_from, "/etc/environment");
  EXPECT_EQ(f.env_value("NCCL_NET_PLUGIN"), "ofi");
  EXPECT_EQ(f.layers, (std::vector<std::string>{"squashfs"}));
}

TEST(GatherFacts, DockerArchiveEnvironmentComesFromTheConfig) {
  ImageFacts f = facts_of(ngc_image(), FixtureKind::DockerArchive);
  EXPECT_EQ(f.kind, "docker-archive");
  EXPECT_EQ(f.env_from, "image config");
  EXPECT_EQ(f.env_value("NCCL_NET_PLUGIN"), "ofi");
}

TEST(GatherFacts, DockerdEnvironmentComesFromTheConfig) {
  if (auto why = testing::unavailable(FixtureKind::Dockerd)) GTEST_SKIP() << *why;
  ImageFacts f = facts_of(ngc_image(), FixtureKind::Dockerd);
  EXPECT_EQ(f.kind, "dockerd");
  EXPECT_TRUE(f.reference.starts_with("dockerd://trainimg-test/")) << f.reference;
  EXPECT_EQ(f.env_from, "image config");
  EXPECT_EQ(f.env_value("NCCL_NET_PLUGIN"), "ofi");
}

// Every source kind of the same image gives the same facts (apart from the
// reference, the kind and the layer ids, which name the source).
class SameFacts : public ::testing::TestWithParam<FixtureKind> {};

nlohmann::ordered_json comparable(const ImageFacts& f) {
  auto j = facts_json(f);
  j.erase("image");
  j["environment"].erase("from");
  std::string text = j.dump();
  for (size_t i = 0; i < f.layers.size(); ++i) {
    for (size_t at = text.find(f.layers[i]); at != std::string::npos; at = text.find(f.layers[i]))
      text.replace(at, f.layers[i].size(), "L");
  }
  // A dir: or squashfs tree is one layer: every layer id reads "L".
  for (size_t at = text.find("\"dir\""); at != std::string::npos; at = text.find("\"dir\"")) text.replace(at, 5, "\"L\"");
  return nlohmann::ordered_json::parse(text);
}

TEST_P(SameFacts, NgcLikeImageGivesTheSameFactsAsDir) {
  if (auto why = testing::unavailable(GetParam())) GTEST_SKIP() << *why;
  auto img = ngc_image();
  img.layer().file("/opt/app/bin/solver", testing::elf_bytes(testing::ElfSpec()
                                                                 .executable()
                                                                 .runpath({"/opt/amazon/openmpi/lib"})
                                                                 .needs({"libmpi.so.40"})),
                   0755);
  auto dir = comparable(facts_of(img, FixtureKind::Dir));
  auto other = comparable(facts_of(img, GetParam()));
  EXPECT_EQ(dir.dump(1), other.dump(1));
  EXPECT_EQ(dir["mpi_selection"]["votes"].size(), 2u);
}

INSTANTIATE_TEST_SUITE_P(Kinds, SameFacts,
                         ::testing::Values(FixtureKind::DockerArchive, FixtureKind::DockerArchiveLegacyGzip,
                                           FixtureKind::OciGzip, FixtureKind::OciZstdManifestList,
                                           FixtureKind::OciArchive, FixtureKind::SqshLzoNoD,
                                           FixtureKind::SqshGzip, FixtureKind::Memory, FixtureKind::Dockerd),
                         [](const auto& info) { return testing::to_string(info.param); });

}  // namespace
}  // namespace trainimg::inspect::facts
