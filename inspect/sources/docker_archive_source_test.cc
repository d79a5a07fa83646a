// SPDX-License-Identifier: GPL-3.0-or-later
// docker-archive: on archives written from nothing by the test (libarchive),
// in both of docker's layouts, plain/gzip/zstd layers, and hostile variants.
#include "inspect/sources/docker_archive_source.h"

#include <gtest/gtest.h>

#include "common/error.h"
#include "common/sha256.h"
#include "inspect/testing/image_builder.h"
#include "inspect/tree.h"

namespace trainimg::inspect {
namespace {

using namespace testing;

// A small NGC-like image: EFA in layer 1, a whiteout and an opaque dir in layer 2.
ImageSpec sample_image() {
  ImageSpec img;
  img.config.env = {"PATH=/usr/local/mpi/bin:/usr/bin", "LD_LIBRARY_PATH=/opt/amazon/efa/lib"};
  img.layer()
      .dir("/usr")
      .dir("/usr/local/mpi/lib")
      .file("/usr/local/mpi/lib/libmpi.so.40.30.0", "mpi4")
      .dir("/etc/ld.so.conf.d")
      .file("/etc/ld.so.conf.d/old.conf", "/old\n")
      .file("/etc/big", std::string(300000, 'b'));
  img.layer()
      .dir("/opt/amazon/efa/lib")
      .file("/opt/amazon/efa_installed_packages", "# EFA installer version: 1.50.0\n")
      .file("/opt/amazon/efa/lib/libfabric.so.1.26.0", "fabric", 0755)
      .hardlink("/opt/amazon/efa/lib/libfabric.so.1", "/opt/amazon/efa/lib/libfabric.so.1.26.0")
      .symlink("/opt/amazon/efa/lib/libfabric.so", "libfabric.so.1");
  img.layer()
      .whiteout("/usr/local/mpi")
      .dir("/etc/ld.so.conf.d")
      .opaque("/etc/ld.so.conf.d")
      .file("/etc/ld.so.conf.d/efa.conf", "/opt/amazon/efa/lib\n")
      .chardev("/dev-null", 1, 3);
  return img;
}

WantFn want_small() {
  return [](const Entry& e) { return e.size < 1000; };
}

MergedTree tree_of(ImageSource& src) { return build_tree(src, want_small(), capture_all); }

std::string expected_listing(const ImageSpec& img) {
  auto mem = memory_source(img);
  return tree_listing(tree_of(*mem));
}

void expect_error(const std::string& spec, const std::string& needle) {
  try {
    auto src = open_docker_archive_source(spec);
    tree_of(*src);
    FAIL() << "no error for " << spec;
  } catch (const Error& e) {
    if (getenv("SHOW_ERRORS")) fprintf(stderr, "ERR: %s\n", e.what());
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos) << "one line: " << e.what();
  }
}

struct Variant {
  ArchiveLayout layout;
  Compression compression;
};

class DockerArchiveLayouts : public ::testing::TestWithParam<Variant> {};

TEST_P(DockerArchiveLayouts, MergedTreeMatchesTheLayersWhiteoutsApplied) {
  TempDir tmp;
  ImageSpec img = sample_image();
  write_docker_archive(img, tmp / "img.tar", GetParam().layout, GetParam().compression);
  auto src = open_docker_archive_source(tmp / "img.tar");
  MergedTree t = tree_of(*src);
  EXPECT_EQ(tree_listing(t), expected_listing(img));
  EXPECT_FALSE(t.lookup("/usr/local/mpi"));
  EXPECT_EQ(t.children("/etc/ld.so.conf.d"), std::vector<std::string>{"/etc/ld.so.conf.d/efa.conf"});
  EXPECT_EQ(t.captured.at("/opt/amazon/efa/lib/libfabric.so.1"), "fabric");
  ImageDescription d = src->describe();
  EXPECT_EQ(d.kind, "docker-archive");
  EXPECT_TRUE(d.has_config);
  EXPECT_EQ(d.config.env, img.config.env);
  EXPECT_EQ(d.layers, diff_ids(img));
  EXPECT_EQ(d.config_digest, sha256_digest(config_json(img)));
  EXPECT_EQ(t.lookup("/opt/amazon/efa_installed_packages")->layer, diff_ids(img)[1]);
  EXPECT_EQ(t.removed_by("/usr/local/mpi/lib/libmpi.so.40.30.0"), diff_ids(img)[2]);
}

INSTANTIATE_TEST_SUITE_P(All, DockerArchiveLayouts,
                         ::testing::Values(Variant{ArchiveLayout::Oci, Compression::None},
                                           Variant{ArchiveLayout::Oci, Compression::Gzip},
                                           Variant{ArchiveLayout::Oci, Compression::Zstd},
                                           Variant{ArchiveLayout::Legacy, Compression::None},
                                           Variant{ArchiveLayout::Legacy, Compression::Gzip}));

TEST(DockerArchive, GzippedWholeArchiveIsReadInOneStreamingPass) {
  TempDir tmp;
  ImageSpec img = sample_image();
  write_docker_archive(img, tmp / "img.tar", ArchiveLayout::Oci);
  ASSERT_EQ(system(("gzip -k " + tmp / "img.tar").c_str()), 0);
  auto src = open_docker_archive_source(tmp / "img.tar.gz");
  EXPECT_EQ(tree_listing(tree_of(*src)), expected_listing(img));
  EXPECT_EQ(src->describe().layers, diff_ids(img));
}

TEST(DockerArchive, StreamedArchiveRecordsLayersOverFourMiBAndReplaysThemInManifestOrder) {
  TempDir tmp;
  ImageSpec img;
  std::string big(5 << 20, 'B');
  img.layer().file("/lib/big.so", big).file("/lib/small.so", "s1").file("/lib/gone", "g");
  img.layer().file("/lib/pad", std::string(5 << 20, 'P')).file("/lib/small.so", "s2").whiteout("/lib/gone");
  write_docker_archive(img, tmp / "img.tar", ArchiveLayout::Oci);
  ASSERT_EQ(system(("gzip " + tmp / "img.tar").c_str()), 0);
  auto src = open_docker_archive_source(tmp / "img.tar.gz");
  MergedTree t = build_tree(
      *src, [](const Entry& e) { return e.path != "/lib/pad"; }, capture_all);
  EXPECT_EQ(t.captured.at("/lib/big.so"), big);
  EXPECT_EQ(t.captured.at("/lib/small.so"), "s2");
  EXPECT_EQ(t.captured.count("/lib/pad"), 0u);
  EXPECT_FALSE(t.lookup("/lib/gone"));
  EXPECT_EQ(t.lookup("/lib/pad")->layer, diff_ids(img)[1]);
}

TEST(DockerArchive, TagSelectsAnImage) {
  TempDir tmp;
  ImageSpec img = sample_image();
  write_docker_archive(img, tmp / "img.tar");
  EXPECT_EQ(open_docker_archive_source(tmp / "img.tar:trainimg-fixture:latest")->describe().layers, diff_ids(img));
  expect_error(tmp / "img.tar:other:1", "no image tagged 'other:1' in the archive (tags: trainimg-fixture:latest)");
}

// --- hostile input -----------------------------------------------------------

void write_one_layer(const TempDir& tmp, const LayerSpec& l, Compression c = Compression::None) {
  ImageSpec img;
  img.layers.push_back(l);
  write_docker_archive(img, tmp / "bad.tar", ArchiveLayout::Oci, c);
}

SpecEntry named(const std::string& raw, EntryType t = EntryType::File, const std::string& link = {}) {
  SpecEntry s;
  s.entry.path = "/x";
  s.entry.type = t;
  s.entry.mode = 0644;
  s.entry.link_target = link;
  s.raw_name = raw;
  return s;
}

TEST(DockerArchiveHostile, DotDotTraversalIsRefusedNamingTheMember) {
  TempDir tmp;
  write_one_layer(tmp, LayerSpec{}.file("/ok", "1").raw(named("a/../../etc/passwd")));
  expect_error(tmp / "bad.tar", "member 'a/../../etc/passwd' (header at tar offset 1024): path traversal");
}

// Docker accepts a layer whose member names are absolute (it joins the
// cleaned name under the layer's root): so does the reader, at the same path.
TEST(DockerArchiveHostile, AbsoluteMemberNamesAreReadUnderTheRootAsDockerDoes) {
  TempDir tmp;
  write_one_layer(tmp, LayerSpec{}
                           .raw(named("/etc/passwd"))
                           .raw(named("/../../opt/x"))
                           .raw(named("/etc/shadow", EntryType::Hardlink, "/etc/passwd")));
  auto src = open_docker_archive_source(tmp / "bad.tar");
  MergedTree t = tree_of(*src);
  ASSERT_TRUE(t.lookup("/etc/passwd"));
  EXPECT_TRUE(t.lookup("/opt/x"));  // a rooted '..' stays at the root
  ASSERT_TRUE(t.lookup("/etc/shadow"));
  EXPECT_FALSE(t.lookup("/x"));
}

TEST(DockerArchiveHostile, HardLinkToMissingTargetIsRefused) {
  TempDir tmp;
  write_one_layer(tmp, LayerSpec{}.hardlink("/a", "/not-there"));
  expect_error(tmp / "bad.tar", "member 'a' (header at tar offset 0): hard link to missing target 'not-there'");
}

TEST(DockerArchiveHostile, HardLinkToAFileReplacedByADirectoryIsRefused) {
  TempDir tmp;
  write_one_layer(tmp, LayerSpec{}.file("/a", "1").dir("/a").hardlink("/b", "/a"));
  expect_error(tmp / "bad.tar", "member 'b' (header at tar offset 1536): hard link to missing target 'a'");
}

TEST(DockerArchive, HardLinksToEachOfManyEarlierFilesAreAccepted) {
  TempDir tmp;
  LayerSpec l;
  for (int i = 0; i < 3000; ++i) l.file("/d/f" + std::to_string(i), "");  // the set of targets grows
  for (int i = 0; i < 3000; i += 7) l.hardlink("/e/l" + std::to_string(i), "/d/f" + std::to_string(i));
  ImageSpec img;
  img.layers.push_back(l);
  write_docker_archive(img, tmp / "img.tar");
  auto src = open_docker_archive_source(tmp / "img.tar");
  MergedTree t = tree_of(*src);
  ASSERT_TRUE(t.lookup("/e/l2996"));
  EXPECT_EQ(t.lookup("/e/l2996")->type, EntryType::Hardlink);
}

TEST(DockerArchiveHostile, MemberWrittenThroughAnEscapingSymlinkIsRefused) {
  TempDir tmp;
  write_one_layer(tmp, LayerSpec{}.symlink("/evil", "/etc").file("/evil/passwd", "root::0:0"));
  expect_error(tmp / "bad.tar", "written through the symlink '/evil' of the same layer");
}

TEST(DockerArchiveHostile, TruncatedArchiveIsAnErrorWithAnOffset) {
  TempDir tmp;
  write_docker_archive(sample_image(), tmp / "img.tar");
  std::string bytes = read_bytes(tmp / "img.tar");
  write_bytes(tmp / "cut.tar", bytes.substr(0, bytes.size() / 2));
  expect_error(tmp / "cut.tar", "cut.tar");
}

TEST(DockerArchiveHostile, TruncatedGzipAndZstdLayersAreErrors) {
  for (Compression c : {Compression::Gzip, Compression::Zstd}) {
    TempDir tmp;
    std::string layer = layer_tar(LayerSpec{}.file("/a", std::string(200000, 'x')), c);
    layer.resize(layer.size() / 2);
    // An archive whose manifest names a truncated compressed blob.
    ImageSpec img;
    img.layer().file("/a", "x");
    write_docker_archive(img, tmp / "img.tar", ArchiveLayout::Legacy);
    std::string listing = tmp / "x";
    // Rewrite: replace the legacy layer.tar with the truncated one.
    ASSERT_EQ(system(("cd " + tmp.path() + " && mkdir u && tar -xf img.tar -C u").c_str()), 0);
    ASSERT_EQ(system(("cd " + tmp.path() + "/u && for f in */layer.tar; do cp ../trunc $f 2>/dev/null; done; true")
                         .c_str()),
              0);
    write_bytes(tmp / "trunc", layer);
    ASSERT_EQ(system(("cd " + tmp.path() + "/u && for f in */layer.tar; do cp ../trunc $f; done && tar -cf ../t.tar *")
                         .c_str()),
              0);
    expect_error(tmp / "t.tar", "layer ");
  }
}

TEST(DockerArchiveHostile, ConfigDigestMismatchIsRefused) {
  TempDir tmp;
  write_docker_archive(sample_image(), tmp / "img.tar", ArchiveLayout::Legacy);
  ASSERT_EQ(system(("cd " + tmp.path() + " && mkdir u && tar -xf img.tar -C u && cd u && for f in *.json; do "
                    "[ $f = manifest.json ] || sed -i 's/usr/USR/' $f; done && tar -cf ../t.tar *")
                       .c_str()),
            0);
  expect_error(tmp / "t.tar", "digest mismatch");
}

TEST(DockerArchiveHostile, MissingLayerBlobIsRefused) {
  TempDir tmp;
  write_docker_archive(sample_image(), tmp / "img.tar", ArchiveLayout::Oci);
  ASSERT_EQ(system(("cd " + tmp.path() + " && mkdir u && tar -xf img.tar -C u && cd u && "
                    "rm blobs/sha256/$(python3 -c 'import json;print(json.load(open(\"manifest.json\"))[0][\"Layers\"][1]"
                    ".split(\"/\")[-1])') && tar -cf ../t.tar *")
                       .c_str()),
            0);
  expect_error(tmp / "t.tar", "named by manifest.json is missing");
}

TEST(DockerArchiveHostile, GarbageFileIsRefused) {
  TempDir tmp;
  write_bytes(tmp / "junk.tar", std::string(5000, '\x07'));
  expect_error(tmp / "junk.tar", "junk.tar");
  write_bytes(tmp / "empty.tar", "");
  expect_error(tmp / "empty.tar", "no manifest.json: not a docker archive");
}

TEST(DockerArchiveHostile, TenGigabyteSizeClaimInATinyLayerIsATruncationError) {
  TempDir tmp;
  std::string layer = layer_tar(LayerSpec{}.file("/a", "tiny").file("/b", "second"));
  // Rewrite the first header's size field (octal, offset 124, 12 bytes) to 10 GiB
  // and fix its checksum: the header now claims far more than the layer holds.
  std::string size = "120000000000";  // 10 GiB in octal
  // pax_restricted writes a plain ustar header for short names: the first 512 bytes.
  layer.replace(124, 12, size);
  layer.replace(148, 8, "        ");
  unsigned sum = 0;
  for (int i = 0; i < 512; ++i) sum += static_cast<unsigned char>(layer[i]);
  char chk[8];
  snprintf(chk, sizeof chk, "%06o", sum);
  layer.replace(148, 7, std::string(chk, 6) + '\0');
  ImageSpec img;
  img.layer().file("/placeholder", "p");
  write_docker_archive(img, tmp / "img.tar", ArchiveLayout::Legacy);
  write_bytes(tmp / "layer", layer);
  ASSERT_EQ(system(("cd " + tmp.path() + " && mkdir u && tar -xf img.tar -C u && cd u && "
                    "for f in */layer.tar; do cp ../layer $f; done && tar -cf ../t.tar *")
                       .c_str()),
            0);
  expect_error(tmp / "t.tar", "layer ");
}

TEST(DockerArchiveHostile, StreamedBlobDigestMismatchIsRefused) {
  TempDir tmp;
  write_docker_archive(sample_image(), tmp / "img.tar", ArchiveLayout::Oci);
  // Flip one byte of the config blob (its name stays), then compress the archive
  // so that it is read by the one-pass streaming reader.
  ASSERT_EQ(system(("cd " + tmp.path() + " && mkdir u && tar -xf img.tar -C u && cd u && "
                    "c=$(python3 -c 'import json;print(json.load(open(\"manifest.json\"))[0][\"Config\"])') && "
                    "sed -i 's/amd64/AMD64/' $c && tar -cf ../t.tar * && gzip ../t.tar")
                       .c_str()),
            0);
  expect_error(tmp / "t.tar.gz", "digest mismatch");
}

TEST(DockerArchiveHostile, TruncatedStreamedArchiveIsAnError) {
  TempDir tmp;
  write_docker_archive(sample_image(), tmp / "img.tar", ArchiveLayout::Oci);
  std::string bytes = read_bytes(tmp / "img.tar");
  write_bytes(tmp / "cut.tar", bytes.substr(0, bytes.size() - 3000));
  ASSERT_EQ(system(("gzip " + tmp / "cut.tar").c_str()), 0);
  expect_error(tmp / "cut.tar.gz", "cut.tar.gz");
}

TEST(DockerArchiveHostile, DuplicateMembersLastWinsAndLongNamesAndDeviceNodesAreRead) {
  TempDir tmp;
  std::string longname = "/" + std::string(150, 'd') + "/" + std::string(120, 'f');
  ImageSpec img;
  img.layer().file("/dup", "first").file("/dup", "second").file(longname, "long").chardev("/dev/null", 1, 3);
  write_docker_archive(img, tmp / "img.tar");
  auto src = open_docker_archive_source(tmp / "img.tar");
  MergedTree t = tree_of(*src);
  EXPECT_EQ(t.captured.at("/dup"), "second");
  EXPECT_EQ(t.captured.at(longname), "long");
  EXPECT_EQ(t.lookup("/dev/null")->type, EntryType::CharDev);
  EXPECT_EQ(t.lookup("/dev/null")->rdev_minor, 3u);
}

}  // namespace
}  // namespace trainimg::inspect
