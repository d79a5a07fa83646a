// SPDX-License-Identifier: GPL-3.0-or-later
// The reader against images made by the real mksquashfs 4.5.1, one per
// compressor and layout enroot/Pyxis use (LZO with and without -noD, the
// LZO algorithm variants, zstd as Pyxis's importer writes it).
#include <gtest/gtest.h>

#include "common/error.h"
#include "sqsh/sqsh.h"
#include "sqsh/test_support.h"

namespace trainimg::sqsh {
namespace {

using testing::Record;
using testing::TempDir;

struct MksquashfsCase {
  const char* name;
  const char* args;
  Compressor compressor;
  bool data_compressed;
};

class MksquashfsImage : public ::testing::TestWithParam<MksquashfsCase> {};

void expect_same_tree(const std::map<std::string, Record>& want, const std::map<std::string, Record>& got,
                      bool check_owner) {
  for (const auto& [path, w] : want) {
    auto it = got.find(path);
    ASSERT_NE(it, got.end()) << "missing " << path;
    const Node& g = it->second.node;
    EXPECT_EQ(to_string(g.type), to_string(w.node.type)) << path;
    if (w.node.type != NodeType::Symlink && w.node.type != NodeType::Hardlink) {
      EXPECT_EQ(g.mode, w.node.mode) << path;
    }
    if (check_owner) {
      EXPECT_EQ(g.uid, w.node.uid) << path;
      EXPECT_EQ(g.gid, w.node.gid) << path;
    }
    EXPECT_EQ(g.link_target, w.node.link_target) << path;
    if (w.node.type == NodeType::File) {
      EXPECT_EQ(g.size, w.node.size) << path;
      EXPECT_TRUE(it->second.content == w.content) << path << ": content differs";
    }
  }
  for (const auto& [path, g] : got) {
    if (path == "/null-dev") continue;  // pseudo file, checked separately
    EXPECT_TRUE(want.count(path)) << "unexpected " << path;
  }
}

TEST_P(MksquashfsImage, ReadsEveryEntryAndByte) {
  const MksquashfsCase& c = GetParam();
  TempDir tmp;
  std::string root = tmp / "root";
  bool xattrs = testing::make_fixture_tree(root);
  std::string img_path = tmp / "img.sqsh";
  // A device node as a pseudo file: no root needed, and owner 1000:1001
  // exercises the id table.
  auto r = testing::run("mksquashfs " + testing::quote(root) + " " + testing::quote(img_path) +
                        " -noappend -quiet -no-progress " + c.args + " -p 'null-dev c 0666 1000 1001 1 3'");
  ASSERT_EQ(r.status, 0) << r.output;

  Image img(img_path);
  EXPECT_EQ(img.info().compressor, c.compressor);
  EXPECT_EQ(img.info().data_compressed, c.data_compressed);
  auto got = testing::read_image(img);
  auto want = testing::read_disk(root);
  expect_same_tree(want, got, std::string(c.args).find("-all-root") == std::string::npos);

  const Node& dev = got.at("/null-dev").node;
  EXPECT_EQ(dev.type, NodeType::CharDev);
  EXPECT_EQ(dev.rdev_major, 1u);
  EXPECT_EQ(dev.rdev_minor, 3u);
  bool all_root = std::string(c.args).find("-all-root") != std::string::npos;
  EXPECT_EQ(dev.uid, all_root ? 0u : 1000u);
  EXPECT_EQ(dev.gid, all_root ? 0u : 1001u);
  EXPECT_EQ(dev.mode, 0666u);
  EXPECT_EQ(got.at("/usr/lib/setuid-hardlink").node.type, NodeType::Hardlink);
  EXPECT_EQ(got.at("/usr/lib/setuid-hardlink").node.link_target, "/setuid-bin");
  EXPECT_EQ(got.at("/setuid-bin").node.nlink, 2u);
  if (xattrs) {
    EXPECT_EQ(got.at("/etc/environment").node.xattrs.at("user.trainimg"), "yes");
  }
}

INSTANTIATE_TEST_SUITE_P(
    Compressors, MksquashfsImage,
    ::testing::Values(MksquashfsCase{"gzip", "-comp gzip", Compressor::Gzip, true},
                      MksquashfsCase{"xz", "-comp xz", Compressor::Xz, true},
                      MksquashfsCase{"lzo", "-comp lzo", Compressor::Lzo, true},
                      MksquashfsCase{"lzo_noD_enroot", "-comp lzo -noD -all-root", Compressor::Lzo, false},
                      MksquashfsCase{"lzo1x_1", "-comp lzo -Xalgorithm lzo1x_1", Compressor::Lzo, true},
                      MksquashfsCase{"lzo1x_1_15", "-comp lzo -Xalgorithm lzo1x_1_15", Compressor::Lzo, true},
                      MksquashfsCase{"lzo999_level3", "-comp lzo -Xcompression-level 3", Compressor::Lzo, true},
                      MksquashfsCase{"zstd_pyxis", "-comp zstd -Xcompression-level 3 -b 1M", Compressor::Zstd, true},
                      MksquashfsCase{"lz4", "-comp lz4", Compressor::Lz4, true},
                      MksquashfsCase{"lz4hc", "-comp lz4 -Xhc", Compressor::Lz4, true}),
    [](const ::testing::TestParamInfo<MksquashfsCase>& i) { return std::string(i.param.name); });

// The fixture tree, made in `tmp`/root, as `tmp`/img.sqsh by mksquashfs `flags`.
testing::RunResult mksquashfs_fixture(const TempDir& tmp, const std::string& flags) {
  const std::string root = tmp / "root";
  testing::make_fixture_tree(root);
  return testing::run("mksquashfs " + testing::quote(root) + " " + testing::quote(tmp / "img.sqsh") + " " +
                      flags);
}

// -all-root is not in every case above, so owners are compared only where
// the tree's owners are known; this pins the enroot layout explicitly.
TEST(MksquashfsImage, EnrootLayoutIsLzoWithRawDataAndRootOwners) {
  TempDir tmp;
  auto r = mksquashfs_fixture(tmp, "-all-root -comp lzo -noD -noappend -quiet -no-progress -exit-on-error");
  ASSERT_EQ(r.status, 0) << r.output;
  Image img(tmp / "img.sqsh");
  EXPECT_EQ(img.info().compressor, Compressor::Lzo);
  EXPECT_FALSE(img.info().data_compressed);
  EXPECT_TRUE(img.info().exportable);
  EXPECT_EQ(img.info().block_size, 128u * 1024);
  EXPECT_FALSE(img.info().compressor_options);  // lzo1x_999 level 8 is the default
  for (const auto& [path, rec] : testing::read_image(img)) {
    EXPECT_EQ(rec.node.uid, 0u) << path;
    EXPECT_EQ(rec.node.gid, 0u) << path;
  }
}

TEST(MksquashfsImage, LzoOptionsBlockIsRead) {
  TempDir tmp;
  auto r = mksquashfs_fixture(
      tmp, "-comp lzo -Xalgorithm lzo1x_999 -Xcompression-level 5 -noappend -quiet -no-progress");
  ASSERT_EQ(r.status, 0) << r.output;
  Image img(tmp / "img.sqsh");
  EXPECT_TRUE(img.info().compressor_options);
  EXPECT_EQ(img.info().lzo_algorithm, 4u);  // SQFS_LZO1X_999
  EXPECT_EQ(img.info().lzo_level, 5u);
}

TEST(Image, StatAndReadFileFindSmallConfigFiles) {
  TempDir tmp;
  ASSERT_EQ(mksquashfs_fixture(tmp, "-comp lzo -noD -noappend -quiet").status, 0);
  Image img(tmp / "img.sqsh");
  auto env = img.read_file("/etc/environment", 1 << 20);
  ASSERT_TRUE(env);
  EXPECT_EQ(*env, "PATH=/usr/local/bin:/usr/bin\nLD_LIBRARY_PATH=/opt/amazon/efa/lib\n");
  EXPECT_EQ(img.read_file("etc//./environment", 4).value(), "PATH");
  EXPECT_FALSE(img.read_file("/etc/rc", 100));
  EXPECT_FALSE(img.read_file("/etc", 100));  // a directory
  auto link = img.stat("/opt/amazon/efa/lib/libfabric.so.1");
  ASSERT_TRUE(link);
  EXPECT_EQ(link->type, NodeType::Symlink);
  EXPECT_EQ(link->link_target, "libfabric.so.1.21.0");
  EXPECT_FALSE(img.stat("/etc/environment/x"));
  EXPECT_THROW(img.stat("/../etc"), Error);
}

TEST(Image, OnlyWantedFilesAreRead) {
  TempDir tmp;
  ASSERT_EQ(mksquashfs_fixture(tmp, "-comp zstd -noappend -quiet").status, 0);
  struct OnlyEnv : Visitor {
    bool entry(const Node& n) override {
      ++entries;
      return n.path == "/etc/environment";
    }
    void content(const Node& n, FileReader& r) override {
      contents.push_back(n.path);
      char b[8];
      EXPECT_EQ(r.skip(5), 5u);  // skipping then reading continues at the offset
      EXPECT_EQ(r.read(b, 4), 4u);
      EXPECT_EQ(std::string(b, 4), "/usr");
    }
    int entries = 0;
    std::vector<std::string> contents;
  } v;
  Image img(tmp / "img.sqsh");
  img.walk(v);
  EXPECT_EQ(v.contents, std::vector<std::string>{"/etc/environment"});
  EXPECT_GT(v.entries, 20);
}

}  // namespace
}  // namespace trainimg::sqsh
