// SPDX-License-Identifier: GPL-3.0-or-later
// The layered data pass (segments.h): the same image whatever reads it, one
// layer per thread or one walk, and nothing left behind.
#include "builder/import/segments.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>

#include "builder/import/import.h"
#include "common/error.h"
#include "inspect/testing/image_builder.h"
#include "sqsh/test_support.h"

namespace trainimg::builder {
namespace {

namespace fs = std::filesystem;
using inspect::testing::Compression;
using inspect::testing::ImageSpec;
using inspect::testing::TempDir;

// Bytes no compressor shrinks, so that an image's size tells which files it holds.
std::string incompressible(size_t n, unsigned seed) {
  return sqsh::testing::make_bytes(n, /*compressible=*/false, seed);
}

std::string bytes(size_t n, unsigned seed) {
  std::string s(n, '\0');
  uint32_t x = seed * 2654435761u + 1;
  for (char& c : s) {
    x ^= x << 13, x ^= x >> 17, x ^= x << 5;
    c = static_cast<char>(x % 7 == 0 ? x >> 8 : 'a' + x % 3);  // partly compressible
  }
  return s;
}

// Five layers of files across the 128 KiB block size (tails, whole blocks, a
// file a later layer replaces, one it deletes, a hard link, a layer with no
// file bytes at all).
ImageSpec five_layers() {
  ImageSpec img;
  img.tag = "trainimg-segments:1";
  img.layer()
      .dir("/usr")
      .file("/usr/a", bytes(300000, 1))
      .file("/usr/b", bytes(1000, 2))
      .file("/usr/replaced", bytes(200000, 3))
      .file("/usr/deleted", bytes(5000, 4))
      .hardlink("/usr/a-link", "/usr/a");
  img.layer().dir("/opt").file("/opt/c", bytes(131072, 5)).file("/opt/d", bytes(17, 6));
  img.layer().whiteout("/usr/deleted").dir("/empty-layer-dir");
  img.layer().file("/usr/replaced", bytes(400000, 7)).file("/opt/e", bytes(64, 8));
  img.layer().file("/top", bytes(250000, 9)).file("/usr/b", bytes(999, 10));
  img.config.env = {"PATH=/usr/bin:/bin"};
  return img;
}

ImportOptions options(const std::string& source, const std::string& output, unsigned jobs) {
  ImportOptions o;
  o.source = source;
  o.output = output;
  o.jobs = jobs;
  o.block_size = 128u * 1024;
  o.source_date_epoch = 1700000000;
  o.inspect = false;
  return o;
}

std::set<std::string> names_in(const fs::path& dir) {
  std::set<std::string> s;
  for (const auto& e : fs::directory_iterator(dir)) s.insert(e.path().filename().string());
  return s;
}

// An OCI layout and a docker archive are read one layer per thread (8 jobs,
// and 1); a gzip-compressed docker archive cannot read a layer alone and is
// walked once into the same segments: every import is the same bytes.
TEST(ImportSegments, EveryWayOfReadingTheLayersGivesTheSameBytes) {
  TempDir tmp;
  ImageSpec img = five_layers();
  inspect::testing::write_oci_layout(img, tmp / "oci");
  inspect::testing::write_docker_archive(img, tmp / "img.tar");
  ASSERT_EQ(sqsh::testing::run("gzip -kn " + tmp / "img.tar").status, 0);
  import_image(options("oci:" + tmp / "oci", tmp / "oci8.sqsh", 8));
  import_image(options("oci:" + tmp / "oci", tmp / "oci1.sqsh", 1));
  import_image(options("docker-archive:" + tmp / "img.tar", tmp / "tar3.sqsh", 3));
  ImportResult streamed = import_image(options("docker-archive:" + tmp / "img.tar.gz", tmp / "gz.sqsh", 8));
  EXPECT_EQ(streamed.passes, 1u);
  for (const char* other : {"oci1.sqsh", "tar3.sqsh", "gz.sqsh"})
    EXPECT_EQ(sqsh::testing::run("cmp " + tmp / "oci8.sqsh" + " " + tmp / other).status, 0) << other;
  // What a reader sees: the last layer's versions, the deletion, the link.
  auto ls = sqsh::testing::run("rdsquashfs -d " + tmp / "oci8.sqsh");
  for (const char* p : {"usr/a", "usr/a-link", "usr/b", "usr/replaced", "opt/c", "opt/d", "opt/e", "top"})
    EXPECT_NE(ls.output.find("file " + std::string(p) + " 0644"), std::string::npos) << p << "\n"
                                                                                     << ls.output;
  EXPECT_EQ(ls.output.find("usr/deleted"), std::string::npos);
  std::ofstream(tmp / "want-replaced", std::ios::binary) << bytes(400000, 7);
  EXPECT_EQ(sqsh::testing::run("rdsquashfs -c /usr/replaced " + tmp / "oci8.sqsh" + " | cmp - " +
                               tmp / "want-replaced")
                .status,
            0);
  std::ofstream(tmp / "want-b", std::ios::binary) << bytes(999, 10);
  EXPECT_EQ(
      sqsh::testing::run("rdsquashfs -c /usr/b " + tmp / "oci8.sqsh" + " | cmp - " + tmp / "want-b").status,
      0);
  EXPECT_EQ(sqsh::testing::run("sqfsdiff --old " + tmp / "oci8.sqsh" + " --new " + tmp / "gz.sqsh").status,
            0);
}

// Each layer is read once and its files compressed as it is read, before the
// merge knows which win; the image gets only the blocks of the versions that
// did: not those of a file a later layer deletes, replaces or hides under an
// opaque directory. The same bytes whether the layers are read side by side
// (oci:) or in one walk (a gzip-compressed docker archive).
TEST(ImportSegments, EachLayerIsReadOnceAndOnlyTheBlocksOfTheFilesKeptAreCopied) {
  TempDir tmp;
  ImageSpec img;
  img.tag = "trainimg-segments:dead";
  img.layer()
      .dir("/d")
      .file("/deleted", incompressible(600000, 1))
      .file("/replaced", incompressible(500000, 2))
      .file("/d/hidden", incompressible(400000, 3))
      .file("/kept", incompressible(300000, 4));
  img.layer().whiteout("/deleted").file("/replaced", incompressible(200000, 5));
  img.layer().opaque("/d").file("/d/new", incompressible(1000, 6));
  inspect::testing::write_oci_layout(img, tmp / "oci");
  inspect::testing::write_docker_archive(img, tmp / "img.tar");
  ASSERT_EQ(sqsh::testing::run("gzip -n " + tmp / "img.tar").status, 0);
  std::vector<ImportProgress> events;
  ImportResult side = import_image(options("oci:" + tmp / "oci", tmp / "oci.sqsh", 4),
                                   [&](const ImportProgress& p) { events.push_back(p); });
  ImportResult walk = import_image(options("docker-archive:" + tmp / "img.tar.gz", tmp / "gz.sqsh", 4));
  EXPECT_EQ(side.passes, 1u);
  EXPECT_EQ(walk.passes, 1u);
  EXPECT_EQ(sqsh::testing::run("cmp " + tmp / "oci.sqsh" + " " + tmp / "gz.sqsh").status, 0);
  // Progress: from "data" on, the kept files of their totals, never past them
  // (the merge compressed every version; the counts start again).
  ASSERT_FALSE(events.empty());
  for (const ImportProgress& p : events) {
    if (p.phase == "resolve" || p.phase == "merge") continue;
    EXPECT_EQ(p.total_files, 3u) << p.phase;
    EXPECT_EQ(p.total_bytes, 501000u) << p.phase;
    EXPECT_LE(p.files, p.total_files) << p.phase;
    EXPECT_LE(p.bytes, p.total_bytes) << p.phase;
  }
  EXPECT_EQ(events.back().files, 3u);
  EXPECT_EQ(events.back().bytes, 501000u);
  // 300000 + 200000 + 1000 bytes kept, 1.5 MB compressed and dropped.
  EXPECT_GT(side.image_bytes, 501000u);
  EXPECT_LT(side.image_bytes, 501000u + 128u * 1024);
  auto ls = sqsh::testing::run("rdsquashfs -d " + tmp / "oci.sqsh");
  for (const char* gone : {"deleted", "d/hidden"}) EXPECT_EQ(ls.output.find(gone), std::string::npos) << gone;
  for (const auto& [path, data] :
       {std::pair{"/kept", incompressible(300000, 4)}, std::pair{"/replaced", incompressible(200000, 5)},
        std::pair{"/d/new", incompressible(1000, 6)}}) {
    std::ofstream(tmp / "want", std::ios::binary) << data;
    EXPECT_EQ(sqsh::testing::run("rdsquashfs -c " + std::string(path) + " " + tmp / "oci.sqsh" + " | cmp - " +
                                 tmp / "want")
                  .status,
              0)
        << path;
  }
}

// Segments live in the output's directory; with named temporary files (what
// file systems without O_TMPFILE get) none is left after an import, nor
// after one that fails on a damaged layer while other layers are read.
TEST(ImportSegments, NoSegmentIsLeftBehindAfterSuccessOrFailure) {
  TempDir tmp;
  ImageSpec img = five_layers();
  inspect::testing::write_oci_layout(img, tmp / "oci");
  ::setenv("TRAINIMG_ATOMIC_NAMED", "1", 1);
  struct Unset {
    ~Unset() { ::unsetenv("TRAINIMG_ATOMIC_NAMED"); }
  } unset;
  fs::create_directory(tmp / "out");
  import_image(options("oci:" + tmp / "oci", tmp / "out/ok.sqsh", 4));
  EXPECT_EQ(names_in(tmp / "out"), (std::set<std::string>{"ok.sqsh", "ok.sqsh.index", "ok.sqsh.json"}));
  // The fourth layer's blob damaged in the middle: its digest no longer matches.
  std::string victim;
  for (const auto& e : fs::directory_iterator(tmp / "oci/blobs/sha256")) {
    std::ifstream in(e.path(), std::ios::binary);
    std::string data((std::istreambuf_iterator<char>(in)), {});
    if (data.size() > 2 && data[0] == '\x1f' && data[1] == '\x8b' && data.size() > 100000) victim = e.path();
  }
  ASSERT_FALSE(victim.empty());
  {
    std::fstream f(victim, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(static_cast<std::streamoff>(fs::file_size(victim) / 2));
    f.put('\0').put('\1').put('\2');
  }
  // --jobs 2 caps the threads at work at two (cpu_slots.h): the failing
  // layer's reader and the one cancelled beside it each drop a writer with
  // blocks in flight, whose compressors need the slots the readers held.
  for (unsigned jobs : {4u, 2u}) {
    try {
      import_image(options("oci:" + tmp / "oci", tmp / "out/bad.sqsh", jobs));
      FAIL() << "a damaged layer was imported";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(fs::path(victim).filename().string()), std::string::npos)
          << e.what();
    }
  }
  EXPECT_EQ(names_in(tmp / "out"), (std::set<std::string>{"ok.sqsh", "ok.sqsh.index", "ok.sqsh.json"}));
}

// The layers start biggest first by the bytes of the files they write (a
// blob's size says little of them), then by blob size, then in layer order.
TEST(ImportSegments, TheLayersWithTheMostFileBytesStartFirst) {
  auto layer = [](size_t index, uint64_t blob, std::vector<uint64_t> sizes) {
    LayerFiles l{.layer = index, .first_seq = 0, .blob_bytes = blob, .files = {}};
    for (uint64_t n : sizes) {
      SegmentFile f;
      f.node.size = n;
      l.files.push_back(std::move(f));
    }
    return l;
  };
  std::vector<LayerFiles> layers;
  layers.push_back(layer(0, 900, {10, 10}));      // the biggest blob, the fewest file bytes
  layers.push_back(layer(1, 100, {4000, 4000}));  // libraries that compress well
  layers.push_back(layer(2, 300, {30}));
  layers.push_back(layer(3, 500, {30}));  // as many file bytes as layer 2, a bigger blob
  layers.push_back(layer(4, 500, {15, 15}));
  layers.push_back(layer(5, 0, {}));
  EXPECT_EQ(start_order(layers), (std::vector<size_t>{1, 3, 4, 2, 0, 5}));
}

}  // namespace
}  // namespace trainimg::builder

namespace trainimg::builder {
namespace {

// shares_blocks() decides whether segments start their write-back as they are
// written: true on XFS with reflinks (.ci/start-reflink.sh), false on tmpfs
// and where there is no directory; it leaves nothing behind.
TEST(ImportSegments, SharesBlocksOnlyWhereTheFileSystemHasReflinks) {
  inspect::testing::TempDir tmp;  // under $TMPDIR or /tmp
  EXPECT_FALSE(shares_blocks(tmp.path() + "/no/such/dir/out.sqsh"));
  if (std::filesystem::is_directory("/dev/shm")) {
    EXPECT_FALSE(shares_blocks("/dev/shm/out.sqsh"));
  }
  const std::string dir = sqsh::testing::reflink_dir();
  if (dir.empty()) GTEST_SKIP() << "no file system with reflinks (run .ci/start-reflink.sh as root)";
  const auto before = std::distance(std::filesystem::directory_iterator(dir), {});
  EXPECT_TRUE(shares_blocks(dir + "/out.sqsh"));
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir), {}), before);
}

// More than 4 layers at once are written lean (no feed or write-behind
// thread: memory), except the last 4 to start, whose readers bound the end
// of the pass; every segment has at least two compressor threads from
// --jobs 2 on.
TEST(ImportSegments, OnlyTheLastLayersToStartOfAWidePassGetFeedAndWriteBehindThreads) {
  EXPECT_TRUE(segment_threads(16, 16, 10).lean);
  EXPECT_TRUE(segment_threads(16, 16, kLastLayersNotLean).lean);
  EXPECT_FALSE(segment_threads(16, 16, kLastLayersNotLean - 1).lean);
  EXPECT_FALSE(segment_threads(16, 16, 0).lean);
  EXPECT_FALSE(segment_threads(16, 4, 10).lean);  // up to 4 at once: never lean
  EXPECT_EQ(segment_threads(16, 16, 10).workers, 2u);
  EXPECT_EQ(segment_threads(16, 4, 10).workers, 4u);
  EXPECT_EQ(segment_threads(1, 16, 10).workers, 1u);
}

}  // namespace
}  // namespace trainimg::builder
