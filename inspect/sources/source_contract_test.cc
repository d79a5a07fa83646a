// SPDX-License-Identifier: GPL-3.0-or-later
// The contract every image source keeps: the same image, written in every
// form trainimg reads, yields the same merged tree (entries, types, modes,
// sizes, link targets, captured bytes) and the same config Env.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <functional>

#include "inspect/engine/engine.h"
#include "inspect/sources/source.h"
#include "inspect/testing/image_builder.h"
#include "inspect/tree.h"

namespace trainimg::inspect {
namespace {

using namespace testing;

// Three layers exercising every merge rule that a flattened form can show.
ImageSpec contract_image() {
  ImageSpec img;
  img.config.env = {"PATH=/usr/local/mpi/bin:/usr/bin", "LD_LIBRARY_PATH=/opt/amazon/efa/lib"};
  img.layer()
      .dir("/usr/local/mpi/lib")
      .file("/usr/local/mpi/lib/libmpi.so.40.30.0", "mpi4")
      .dir("/etc/ld.so.conf.d")
      .file("/etc/ld.so.conf.d/old.conf", "/old\n")
      .file("/etc/replaced", "dir-next")
      .file("/usr/bin/tool", std::string(200000, 't'), 0755);
  img.layer()
      .dir("/opt/amazon/efa/lib")
      .file("/opt/amazon/efa_installed_packages", "# EFA installer version: 1.50.0\nlibfabric1-aws_2.6.0\n")
      .file("/opt/amazon/efa/lib/libfabric.so.1.26.0", "fabric", 0755)
      .hardlink("/opt/amazon/efa/lib/libfabric.so.1", "/opt/amazon/efa/lib/libfabric.so.1.26.0")
      .symlink("/opt/amazon/efa/lib/libfabric.so", "libfabric.so.1")
      .symlink("/usr/local/cuda", "/usr/local/cuda-12.4")
      .dir("/usr/local/cuda-12.4")
      .file("/usr/local/cuda-12.4/version.json", R"({"cuda":{"version":"12.4.1"}})");
  img.layer()
      .whiteout("/usr/local/mpi")
      .dir("/etc/ld.so.conf.d")
      .opaque("/etc/ld.so.conf.d")
      .file("/etc/ld.so.conf.d/efa.conf", "/opt/amazon/efa/lib\n")
      .dir("/etc/replaced")
      .file("/etc/replaced/now-a-dir", "x")
      .fifo("/run/fifo");
  return img;
}

struct Kind {
  std::string name;
  // Writes the image under `dir` and returns the source URI.
  std::function<std::string(const ImageSpec&, const std::string& dir)> write;
  std::string needs;  // a program that must exist, else the kind is skipped
};

void PrintTo(const Kind& k, std::ostream* os) { *os << k.name; }

std::string sh(const std::string& cmd) {
  int rc = system(cmd.c_str());
  if (rc != 0) throw std::runtime_error("failed (" + std::to_string(rc) + "): " + cmd);
  return {};
}

const Kind kKinds[] = {
    {"dir", [](const ImageSpec& i, const std::string& d) { write_rootfs(i, d + "/root"); return "dir:" + d + "/root"; }, ""},
    {"docker_archive_oci_layout",
     [](const ImageSpec& i, const std::string& d) {
       write_docker_archive(i, d + "/i.tar", ArchiveLayout::Oci);
       return "docker-archive:" + d + "/i.tar";
     }, ""},
    {"docker_archive_legacy_gzip_layers",
     [](const ImageSpec& i, const std::string& d) {
       write_docker_archive(i, d + "/i.tar", ArchiveLayout::Legacy, Compression::Gzip);
       return "docker-archive:" + d + "/i.tar";
     }, ""},
    {"docker_archive_gzipped_streamed",
     [](const ImageSpec& i, const std::string& d) {
       write_docker_archive(i, d + "/i.tar", ArchiveLayout::Oci, Compression::Zstd);
       sh("gzip " + d + "/i.tar");
       return "docker-archive:" + d + "/i.tar.gz";
     }, "/usr/bin/gzip"},
    {"oci_gzip_probed_bare",
     [](const ImageSpec& i, const std::string& d) {
       write_oci_layout(i, d + "/oci", OciOptions{Compression::Gzip, false});
       return d + "/oci";
     }, ""},
    {"oci_zstd_manifest_list",
     [](const ImageSpec& i, const std::string& d) {
       write_oci_layout(i, d + "/oci", OciOptions{Compression::Zstd, true});
       return "oci:" + d + "/oci:latest";
     }, ""},
    {"dockerd_loaded_image",
     [](const ImageSpec& i, const std::string& d) {
       // The real daemon: POST /images/load of the legacy archive, then dockerd://.
       ImageSpec tagged = i;
       tagged.tag = "trainimg-test-contract:latest";
       write_docker_archive(tagged, d + "/i.tar", ArchiveLayout::Legacy);
       std::string body = read_bytes(d + "/i.tar"), reply;
       size_t pos = 0;
       engine::Engine::connect().post(
           "/images/load?quiet=1",
           [&](char* buf, size_t n) {
             size_t k = std::min(n, body.size() - pos);
             std::copy_n(body.data() + pos, k, buf);
             pos += k;
             return k;
           },
           {"Content-Type: application/x-tar"}, [&](std::string_view s) { reply += s; });
       return "dockerd://" + tagged.tag;
     }, "/var/run/docker.sock"},
    {"sqsh_lzo_by_mksquashfs",
     [](const ImageSpec& i, const std::string& d) {
       write_rootfs(i, d + "/root");
       sh("mksquashfs " + d + "/root " + d + "/i.sqsh -comp lzo -noD -all-root -quiet -no-progress >/dev/null");
       return d + "/i.sqsh";
     }, "/usr/bin/mksquashfs"},
};

class SourceContract : public ::testing::TestWithParam<Kind> {};

TEST_P(SourceContract, EveryKindYieldsTheSameMergedTree) {
  const Kind& k = GetParam();
  if (!k.needs.empty() && access(k.needs.c_str(), F_OK) != 0) GTEST_SKIP() << k.needs << " is absent";
  ImageSpec img = contract_image();
  auto mem = memory_source(img);
  auto want = [](const Entry& e) { return e.size < 100000; };
  const std::string expected = tree_listing(build_tree(*mem, want, capture_all));
  TempDir tmp;
  auto src = open_source(k.write(img, tmp.path()));
  MergedTree t = build_tree(*src, want, capture_all);
  EXPECT_EQ(tree_listing(t), expected);
  EXPECT_EQ(t.resolve("/usr/local/cuda/version.json"), "/usr/local/cuda-12.4/version.json");
  ImageDescription d = src->describe();
  if (d.has_config) {
    EXPECT_EQ(d.config.env, img.config.env);
  }
}

INSTANTIATE_TEST_SUITE_P(Kinds, SourceContract, ::testing::ValuesIn(kKinds),
                         [](const ::testing::TestParamInfo<Kind>& i) { return i.param.name; });

}  // namespace
}  // namespace trainimg::inspect
