// SPDX-License-Identifier: GPL-3.0-or-later
// Hostile and broken images (issue 4): each must end in a trainimg::Error
// naming the file and what is wrong, never a crash or another exception.
// Run under TRAINIMG_SANITIZE=ON in CI.
#include <fcntl.h>
#include <unistd.h>

#include <cstring>
#include <random>

#include <gtest/gtest.h>

#include "common/error.h"
#include "common/fd.h"
#include "sqsh/sqsh.h"
#include "sqsh/test_support.h"

namespace trainimg::sqsh {
namespace {

using testing::TempDir;

std::string error_of(const std::string& path) {
  try {
    Image img(path);
    auto all = testing::read_image(img);
    return "";
  } catch (const Error& e) {
    return e.what();
  }
}

std::string mksquashfs_image(TempDir& tmp, const std::string& args = "-comp gzip") {
  std::string root = tmp / "root";
  testing::make_fixture_tree(root);
  std::string img = tmp / "img.sqsh";
  auto r = testing::run("mksquashfs " + root + " " + img + " -noappend -quiet " + args);
  EXPECT_EQ(r.status, 0) << r.output;
  return testing::read_whole(img);
}

void put_u64(std::string& s, size_t off, uint64_t v) { std::memcpy(s.data() + off, &v, 8); }
uint64_t get_u64(const std::string& s, size_t off) {
  uint64_t v;
  std::memcpy(&v, s.data() + off, 8);
  return v;
}

TEST(HostileImage, MissingFileNamesTheErrno) {
  EXPECT_EQ(error_of("/nonexistent/x.sqsh"), "/nonexistent/x.sqsh: opening: No such file or directory");
}

TEST(HostileImage, GarbageAndEmptyFilesAreNotSquashfs) {
  TempDir tmp;
  testing::write_file(tmp / "garbage", testing::make_bytes(8192, false));
  EXPECT_EQ(error_of(tmp / "garbage"), tmp / "garbage" + ": not a squashfs image: no \"hsqs\" magic at offset 0");
  testing::write_file(tmp / "empty", "");
  EXPECT_EQ(error_of(tmp / "empty"),
            tmp / "empty" + ": not a squashfs image: 0 bytes, too short for the 96-byte super block at offset 0");
}

TEST(HostileImage, TruncatedImageSaysHowMuchIsMissing) {
  TempDir tmp;
  std::string img = mksquashfs_image(tmp);
  std::string cut = img.substr(0, img.size() / 2);
  testing::write_file(tmp / "cut.sqsh", cut);
  std::string bytes_used = std::to_string(get_u64(img, 40));
  EXPECT_EQ(error_of(tmp / "cut.sqsh"), tmp / "cut.sqsh" + ": truncated image: the super block says " + bytes_used +
                                            " bytes are used (field at offset 40), the file has " +
                                            std::to_string(cut.size()));
}

TEST(HostileImage, CorruptTableOffsetsNameTheField) {
  TempDir tmp;
  std::string img = mksquashfs_image(tmp);
  std::string bad = img;
  put_u64(bad, 48, get_u64(img, 40) + 100);  // id table beyond the end
  testing::write_file(tmp / "id.sqsh", bad);
  EXPECT_NE(error_of(tmp / "id.sqsh").find("corrupt super block: id table start"), std::string::npos);
  EXPECT_NE(error_of(tmp / "id.sqsh").find("(field at offset 48)"), std::string::npos);

  bad = img;
  put_u64(bad, 72, 10);  // directory table before the inode table
  testing::write_file(tmp / "dir.sqsh", bad);
  EXPECT_NE(error_of(tmp / "dir.sqsh").find("(field at offset 72)"), std::string::npos);

  bad = img;
  put_u64(bad, 32, 0xFFFFFFFFFFull);  // root inode far outside the inode table
  testing::write_file(tmp / "root.sqsh", bad);
  EXPECT_NE(error_of(tmp / "root.sqsh").find("root inode reference"), std::string::npos);

  bad = img;
  uint32_t frags = 0x7FFFFFFF;  // a fragment count whose table cannot fit
  std::memcpy(bad.data() + 16, &frags, 4);
  testing::write_file(tmp / "frag.sqsh", bad);
  EXPECT_NE(error_of(tmp / "frag.sqsh").find("(field at offset 16)"), std::string::npos);

  bad = img;
  bad[28] = 3;  // squashfs 3.x
  testing::write_file(tmp / "v3.sqsh", bad);
  EXPECT_EQ(error_of(tmp / "v3.sqsh"),
            tmp / "v3.sqsh" + ": unsupported squashfs version at offset 28 (only 4.0 is read)");
}

// A directory entry pointing back at the root: the walk must refuse the loop
// instead of recursing forever. Built with uncompressed meta data so that
// the directory table can be patched in place.
TEST(HostileImage, DirectoryLoopIsRefused) {
  TempDir tmp;
  std::string path = tmp / "loop.sqsh";
  {
    UniqueFd fd(::open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
    WriterOptions opt;
    opt.compressor = Compressor::None;
    Writer w(fd.get(), path, opt);
    Node d;
    d.type = NodeType::Dir;
    d.mode = 0755;
    d.path = "/loopdir/zzchild";
    w.add(d);
    w.finish();
  }
  std::string img = testing::read_whole(path);
  uint64_t root_ref = get_u64(img, 32);
  size_t name = img.find("zzchild", get_u64(img, 72));
  ASSERT_NE(name, std::string::npos);
  size_t entry = name - 8, header = entry - 12;  // the only entry of /loopdir
  uint16_t off = static_cast<uint16_t>(root_ref & 0xFFFF);
  uint32_t block = static_cast<uint32_t>(root_ref >> 16);
  std::memcpy(img.data() + entry, &off, 2);
  std::memcpy(img.data() + header + 4, &block, 4);
  testing::write_file(path, img);
  EXPECT_EQ(error_of(path), path + ": corrupt directory tree: /loopdir/zzchild is a directory reached twice "
                                   "(loop or directory hard link)");
}

// Random corruption (4 bytes) after the super block: every
// outcome is a clean read or an Error, never a crash (ASan in CI).
TEST(HostileImage, RandomCorruptionNeverCrashes) {
  for (const char* args : {"-comp gzip", "-comp lzo -noD", "-comp zstd"}) {
    TempDir tmp;
    std::string img = mksquashfs_image(tmp, args);
    std::mt19937 rng(42);
    int errors = 0;
    for (int i = 0; i < 100; ++i) {
      std::string bad = img;
      // Odd iterations hit anywhere, even ones the meta data (inode table
      // onwards), where every byte matters.
      size_t lo = i % 2 ? 96 : get_u64(img, 64), hi = get_u64(img, 40);
      for (int k = 0; k < 4; ++k) {
        size_t pos = lo + rng() % (hi - lo);
        bad[pos] = static_cast<char>(rng());
      }
      testing::write_file(tmp / "fuzz.sqsh", bad);
      try {
        Image im(tmp / "fuzz.sqsh");
        testing::read_image(im);
      } catch (const Error& e) {
        ++errors;
        EXPECT_EQ(std::string(e.what()).rfind(tmp / "fuzz.sqsh: ", 0), 0u) << e.what();
      }
    }
    EXPECT_GT(errors, 0) << args;
  }
}

}  // namespace
}  // namespace trainimg::sqsh
