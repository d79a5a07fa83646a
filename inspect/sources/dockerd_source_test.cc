// SPDX-License-Identifier: GPL-3.0-or-later
// dockerd:// against the real daemon: a multi-layer image with whiteouts is
// loaded through POST /images/load (from a docker archive written by the
// test), then read back through GET /images/{name}/get. Skipped, saying so,
// when /var/run/docker.sock is absent.
#include "inspect/sources/dockerd_source.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include "common/error.h"
#include "inspect/engine/engine.h"
#include "inspect/sources/source.h"
#include "inspect/testing/image_builder.h"
#include "inspect/tree.h"

namespace trainimg::inspect {
namespace {

using namespace testing;

bool have_daemon() {
  struct stat st {};
  return stat("/var/run/docker.sock", &st) == 0 && S_ISSOCK(st.st_mode);
}

void load_into_daemon(const ImageSpec& img) {
  TempDir tmp;
  write_docker_archive(img, tmp / "i.tar", ArchiveLayout::Legacy);
  std::string body = read_bytes(tmp / "i.tar");
  size_t pos = 0;
  auto e = engine::Engine::connect();
  std::string reply;
  e.post(
      "/images/load?quiet=1",
      [&](char* buf, size_t n) {
        size_t k = std::min(n, body.size() - pos);
        std::copy_n(body.data() + pos, k, buf);
        pos += k;
        return k;
      },
      {"Content-Type: application/x-tar"}, [&](std::string_view s) { reply += s; });
  ASSERT_NE(reply.find("Loaded image"), std::string::npos) << reply;
}

TEST(DockerdSource, ReadsALoadedMultiLayerImageThroughTheEngineApi) {
  if (!have_daemon()) GTEST_SKIP() << "no Docker daemon socket at /var/run/docker.sock; real-daemon test skipped";
  ImageSpec img;
  img.tag = "trainimg-test-dockerd-source:layers";
  img.config.env = {"PATH=/usr/bin", "CUDA_VERSION=12.4.1"};
  img.config.cmd = {"/bin/sh"};
  img.layer().dir("/etc/ld.so.conf.d").file("/etc/ld.so.conf.d/a.conf", "/a\n").file("/gone", "g");
  img.layer().whiteout("/gone").opaque("/etc/ld.so.conf.d").file("/etc/ld.so.conf.d/b.conf", "/b\n");
  load_into_daemon(img);
  auto src = open_dockerd_source(img.tag);
  ImageDescription d = src->describe();
  EXPECT_EQ(d.kind, "dockerd");
  EXPECT_EQ(d.layers, diff_ids(img));
  EXPECT_EQ(d.config.env, img.config.env);
  auto want = [](const Entry&) { return true; };
  MergedTree t = build_tree(*src, want, capture_all);
  auto mem = memory_source(img);
  EXPECT_EQ(tree_listing(t), tree_listing(build_tree(*mem, want, capture_all)));
  EXPECT_EQ(t.removed_by("/gone"), diff_ids(img)[1]);
}

TEST(DockerdSource, MissingImageIsTheDaemonsOneLineError) {
  if (!have_daemon()) GTEST_SKIP() << "no Docker daemon socket at /var/run/docker.sock; real-daemon test skipped";
  try {
    open_dockerd_source("trainimg-no-such-image:never");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("No such image"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace trainimg::inspect
