// SPDX-License-Identifier: GPL-3.0-or-later
#include "builder/import/via_enroot.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "common/error.h"
#include "inspect/testing/image_builder.h"

namespace trainimg::builder {
namespace {

namespace fs = std::filesystem;

TEST(ViaEnroot, RefusesSourcesEnrootCannotRead) {
  ImportOptions o;
  o.source = "docker-archive:/tmp/x.tar";
  o.output = "/tmp/never.sqsh";
  o.via_enroot = true;
  try {
    import_image(o);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.diagnostic().message, "--via enroot takes enroot's URIs only");
  }
}

TEST(ViaEnroot, MissingEnrootIsAClearErrorAndWritesNothing) {
  if (!find_on_path("enroot").empty()) GTEST_SKIP() << "enroot is installed here";
  inspect::testing::TempDir tmp;
  ImportOptions o;
  o.source = "dockerd://busybox:latest";
  o.output = tmp / "img.sqsh";
  o.via_enroot = true;
  try {
    import_image(o);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.diagnostic().file, "enroot");
    EXPECT_EQ(e.diagnostic().message, "not installed (not on PATH)");
  }
  EXPECT_TRUE(fs::is_empty(tmp.path()));
}

// The real thing: enroot imports a local daemon image, trainimg publishes it.
TEST(ViaEnroot, EnrootsOwnImageIsPublishedWithASidecar) {
  if (find_on_path("enroot").empty()) GTEST_SKIP() << "enroot is not installed on this machine; not faked";
  if (::access("/var/run/docker.sock", W_OK) != 0) GTEST_SKIP() << "needs dockerd";
  inspect::testing::TempDir tmp;
  inspect::testing::ImageSpec img;
  img.tag = "trainimg-via-enroot:1";
  img.layer().dir("/bin").file("/bin/true", "#!", 0755);
  img.config.cmd = {"/bin/true"};
  inspect::testing::write_docker_archive(img, tmp / "img.tar", inspect::testing::ArchiveLayout::Legacy);
  ASSERT_EQ(std::system(("docker load -q -i " + tmp / "img.tar" + " >/dev/null").c_str()), 0);
  ImportOptions o;
  o.source = "dockerd://" + img.tag;
  o.output = tmp / "img.sqsh";
  o.via_enroot = true;
  ImportResult r = import_image(o);
  EXPECT_TRUE(fs::exists(o.output));
  EXPECT_TRUE(fs::exists(o.output + ".json"));
  EXPECT_EQ(r.sidecar["via"], "enroot");
  (void)std::system(("docker rmi -f " + img.tag + " >/dev/null 2>&1").c_str());
}

}  // namespace
}  // namespace trainimg::builder
