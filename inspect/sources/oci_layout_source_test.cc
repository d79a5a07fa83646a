// SPDX-License-Identifier: GPL-3.0-or-later
// oci: on layouts written from nothing by the test and checked by the real
// `skopeo inspect`, plus hostile variants.
#include "inspect/sources/oci_layout_source.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>

#include "common/error.h"
#include "inspect/testing/image_builder.h"
#include "inspect/tree.h"

namespace trainimg::inspect {
namespace {

using namespace testing;

ImageSpec sample_image() {
  ImageSpec img;
  img.config.env = {"PATH=/usr/bin", "NCCL_VERSION=2.21.5"};
  img.layer().dir("/usr/lib").file("/usr/lib/libnccl.so.2.21.5", "nccl").file("/etc/old", "o");
  img.layer().whiteout("/etc/old").symlink("/usr/lib/libnccl.so.2", "libnccl.so.2.21.5");
  return img;
}

MergedTree tree_of(ImageSource& src) {
  return build_tree(src, [](const Entry&) { return true; }, capture_all);
}

std::string first_layer_hex(const std::string& dir) {
  auto index = nlohmann::json::parse(read_bytes(dir + "/index.json"));
  std::string m = index["manifests"][0]["digest"].get<std::string>().substr(7);
  auto manifest = nlohmann::json::parse(read_bytes(dir + "/blobs/sha256/" + m));
  return manifest["layers"][0]["digest"].get<std::string>().substr(7);
}

void expect_error(const std::string& spec, const std::string& needle) {
  try {
    auto src = open_oci_layout_source(spec);
    tree_of(*src);
    FAIL() << "no error for " << spec;
  } catch (const Error& e) {
    if (getenv("SHOW_ERRORS")) fprintf(stderr, "ERR: %s\n", e.what());
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

class OciLayouts : public ::testing::TestWithParam<OciOptions> {};

TEST_P(OciLayouts, MergedTreeMatchesAndSkopeoAcceptsTheLayout) {
  TempDir tmp;
  ImageSpec img = sample_image();
  write_oci_layout(img, tmp / "oci", GetParam());
  auto src = open_oci_layout_source(tmp / "oci");
  auto mem = memory_source(img);
  EXPECT_EQ(tree_listing(tree_of(*src)), tree_listing(tree_of(*mem)));
  ImageDescription d = src->describe();
  EXPECT_EQ(d.kind, "oci");
  EXPECT_EQ(d.layers, diff_ids(img));
  EXPECT_EQ(d.config.env, img.config.env);
  if (access("/usr/bin/skopeo", X_OK) == 0) {
    std::string cmd = "skopeo inspect --raw oci:" + tmp / "oci" + ":latest > " + tmp / "skopeo.out" + " 2>&1";
    EXPECT_EQ(system(cmd.c_str()), 0) << read_bytes(tmp / "skopeo.out");
    if (!GetParam().manifest_list) {
      cmd = "skopeo inspect --config oci:" + tmp / "oci" + ":latest > " + tmp / "skopeo.cfg 2>&1";
      EXPECT_EQ(system(cmd.c_str()), 0) << read_bytes(tmp / "skopeo.cfg");
      EXPECT_NE(read_bytes(tmp / "skopeo.cfg").find("NCCL_VERSION=2.21.5"), std::string::npos);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(All, OciLayouts,
                         ::testing::Values(OciOptions{Compression::Gzip, false}, OciOptions{Compression::Zstd, false},
                                           OciOptions{Compression::None, false}, OciOptions{Compression::Gzip, true}));

TEST(OciLayout, ManifestListPicksLinuxAmd64AndTagSelects) {
  TempDir tmp;
  write_oci_layout(sample_image(), tmp / "oci", OciOptions{Compression::Gzip, true});
  auto src = open_oci_layout_source(tmp / "oci:latest");
  MergedTree t = tree_of(*src);
  EXPECT_FALSE(t.lookup("/arm64-only"));
  EXPECT_TRUE(t.lookup("/usr/lib/libnccl.so.2.21.5"));
  expect_error(tmp / "oci:nope", "no manifest tagged 'nope' in index.json (tags: latest)");
}

// An OCI layout in one uncompressed tar (`skopeo copy … oci-archive:`,
// BuildKit's `--output type=oci`): oci-archive:FILE[:TAG], or the bare path
// (a tar with an OCI layout and no manifest.json); read in place.
TEST(OciArchive, SameTreeAsTheLayoutByNameOrBarePath) {
  TempDir tmp;
  ImageSpec img = sample_image();
  write_oci_layout(img, tmp / "oci", OciOptions{Compression::Gzip, true});
  ASSERT_EQ(system(("tar -C " + tmp / "oci" + " -cf " + tmp / "img.tar .").c_str()), 0);
  const std::string want = tree_listing(tree_of(*open_oci_layout_source(tmp / "oci:latest")));
  auto named = open_source("oci-archive:" + tmp / "img.tar:latest");
  EXPECT_EQ(tree_listing(tree_of(*named)), want);
  ImageDescription d = named->describe();
  EXPECT_EQ(d.kind, "oci-archive");
  EXPECT_EQ(d.reference, "oci-archive:" + tmp / "img.tar:latest");
  EXPECT_EQ(d.layers, diff_ids(img));
  EXPECT_EQ(d.digest, open_oci_layout_source(tmp / "oci:latest")->describe().digest);
  auto bare = open_source(tmp / "img.tar");  // one tag: no need to name it
  EXPECT_EQ(tree_listing(tree_of(*bare)), want);
  EXPECT_EQ(bare->describe().kind, "oci-archive");
  auto err = [](const std::function<void()>& f) {
    try {
      f();
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(err([&] {
              open_source("oci-archive:" + tmp / "img.tar:nope");
            }).find("no manifest tagged 'nope' in index.json (tags: latest)"),
            std::string::npos);
  // Compressed: no random access; said so, with what to do.
  ASSERT_EQ(system(("gzip -k " + tmp / "img.tar").c_str()), 0);
  EXPECT_NE(err([&] { open_source("oci-archive:" + tmp / "img.tar.gz"); }).find("a compressed OCI archive"),
            std::string::npos);
  // A blob missing from the archive is named.
  write_oci_layout(img, tmp / "plain", OciOptions{Compression::Gzip, false});
  std::string hex = first_layer_hex(tmp / "plain");
  ASSERT_EQ(
      system(("tar -C " + tmp / "plain" + " -cf " + tmp / "broken.tar --exclude=" + hex + " .").c_str()), 0);
  EXPECT_NE(err([&] {
              tree_of(*open_source("oci-archive:" + tmp / "broken.tar"));
            }).find("blobs/sha256/" + hex + ": missing blob"),
            std::string::npos);
}

TEST(OciLayoutHostile, LayerDigestMismatchNamesTheBlob) {
  TempDir tmp;
  write_oci_layout(sample_image(), tmp / "oci", OciOptions{Compression::None, false});
  std::string hex = first_layer_hex(tmp / "oci");
  std::string blob = read_bytes(tmp / "oci/blobs/sha256/" + hex);
  blob[blob.rfind("nccl")] = 'N';  // the file data, not the name: same size, different bytes
  write_bytes(tmp / "oci/blobs/sha256/" + hex, blob);
  expect_error(tmp / "oci", "blobs/sha256/" + hex + ": digest mismatch");
}

TEST(OciLayoutHostile, MissingBlobIsAnError) {
  TempDir tmp;
  write_oci_layout(sample_image(), tmp / "oci");
  std::string hex = first_layer_hex(tmp / "oci");
  std::filesystem::remove(tmp / "oci/blobs/sha256/" + hex);
  expect_error(tmp / "oci", "blobs/sha256/" + hex + ": missing blob");
}

TEST(OciLayoutHostile, TenGigabyteSizeClaimIsRefusedBeforeReading) {
  TempDir tmp;
  write_oci_layout(sample_image(), tmp / "oci");
  std::string hex = first_layer_hex(tmp / "oci");
  // A sparse 10 GiB blob file whose descriptor says otherwise.
  ASSERT_EQ(truncate((tmp / "oci/blobs/sha256/" + hex).c_str(), 10LL << 30), 0);
  expect_error(tmp / "oci", "size mismatch: the descriptor says");
}

TEST(OciLayoutHostile, BlobThatIsASymlinkOutOfTheLayoutIsRefused) {
  TempDir tmp;
  write_oci_layout(sample_image(), tmp / "oci");
  std::string hex = first_layer_hex(tmp / "oci");
  std::filesystem::remove(tmp / "oci/blobs/sha256/" + hex);
  std::filesystem::create_symlink("/etc/passwd", tmp / "oci/blobs/sha256/" + hex);
  expect_error(tmp / "oci", "a symlink; blobs are only read from inside the layout");
}

TEST(OciLayoutHostile, TruncatedGzipLayerIsAnError) {
  TempDir tmp;
  ImageSpec img;
  img.layer().file("/big", std::string(500000, 'z') + "end");
  write_oci_layout(img, tmp / "oci", OciOptions{Compression::Gzip, false});
  std::string hex = first_layer_hex(tmp / "oci");
  ASSERT_EQ(truncate((tmp / "oci/blobs/sha256/" + hex).c_str(), 300), 0);
  expect_error(tmp / "oci", "size mismatch");  // the descriptor's size catches it first
}

TEST(OciLayoutHostile, GarbageIndexAndMalformedDigestsAreErrors) {
  TempDir tmp;
  write_oci_layout(sample_image(), tmp / "oci");
  write_bytes(tmp / "oci/index.json", "{\"manifests\": [ garbage");
  expect_error(tmp / "oci", "index.json: invalid JSON at byte");
  // Found by fuzz_oci_layout and fuzz_registry: a number no double holds is
  // nlohmann's out_of_range, not its parse_error; it escaped as a crash.
  write_bytes(tmp / "oci/index.json", "{\"schemaVersion\": 2, \"manifests\": [], \"x\": 5e731}");
  expect_error(tmp / "oci", "index.json: invalid JSON: [json.exception.out_of_range.406] number overflow");
  write_bytes(tmp / "oci/index.json",
              R"({"manifests":[{"mediaType":"application/vnd.oci.image.manifest.v1+json",)"
              R"("digest":"sha256:../../../etc/passwd","size":10}]})");
  expect_error(tmp / "oci", "malformed digest 'sha256:../../../etc/passwd'");
  std::filesystem::remove(tmp / "oci/oci-layout");
  expect_error(tmp / "oci", "no oci-layout: not an OCI image layout");
}

}  // namespace
}  // namespace trainimg::inspect
