// SPDX-License-Identifier: GPL-3.0-or-later
// The writer's data thread (sqsh/writer_feed.h): how the caller cuts a
// file's bytes into write() calls must not change one byte of the image,
// whatever the pieces do to the ring (wrapping, filling it, one byte at a
// time); a failure on that thread reaches the caller with its errno; a
// writer dropped with data still queued stops without hanging.
#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <random>

#include "common/error.h"
#include "common/fd.h"
#include "sqsh/sqsh.h"
#include "sqsh/test_support.h"

namespace trainimg::sqsh {
namespace {

using testing::TempDir;

struct File {
  std::string path, content;
};

Node file_node(const std::string& path, size_t size) {
  Node n;
  n.type = NodeType::File;
  n.path = path;
  n.mode = 0644;
  n.size = size;
  return n;
}

// Sizes around the ring (8 MiB), its pieces (1 MiB) and the block size.
std::vector<File> files() {
  std::vector<File> out;
  size_t sizes[] = {0, 1, 4095, 131072, (1 << 20) + 3, 5 << 20, (8 << 20) + 1, 17, 3 << 20, 0, 65536};
  uint32_t seed = 1;
  for (size_t n : sizes) {
    out.push_back({"/d/f" + std::to_string(seed), testing::make_bytes(n, seed % 2 == 0, seed)});
    ++seed;
  }
  for (int i = 0; i < 3000; ++i)  // small files: many ops between wake-ups
    out.push_back(
        {"/small/s" + std::to_string(i), std::string(static_cast<size_t>(i % 300), char('a' + i % 26))});
  return out;
}

// Writes `fs` with every file's bytes cut into pieces of random sizes up to
// `max_piece` (the whole file at once when 0).
std::string write_image(const std::string& path, const std::vector<File>& fs, size_t max_piece,
                        uint32_t seed) {
  std::mt19937 rng(seed);
  {
    UniqueFd fd(::open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
    WriterOptions opt;
    opt.mtime = 1700000000;
    opt.block_size = 131072;
    Writer w(fd.get(), path, opt);
    for (const File& f : fs) {
      w.begin_file(file_node(f.path, f.content.size()));
      for (size_t off = 0; off < f.content.size();) {
        size_t piece =
            max_piece ? std::uniform_int_distribution<size_t>(1, max_piece)(rng) : f.content.size();
        piece = std::min(piece, f.content.size() - off);
        w.write(f.content.data() + off, piece);
        off += piece;
      }
      w.end_file();
    }
    w.finish();
  }
  return testing::read_whole(path);
}

TEST(WriterFeed, HowTheBytesAreCutIntoWritesChangesNothing) {
  TempDir tmp;
  auto fs = files();
  std::string whole = write_image(tmp / "whole.sqsh", fs, 0, 1);
  std::string pieces = write_image(tmp / "pieces.sqsh", fs, 3 << 20, 2);  // pieces wrap the ring anywhere
  std::string small = write_image(tmp / "small.sqsh", fs, 700, 3);
  EXPECT_TRUE(whole == pieces) << "images differ";
  EXPECT_TRUE(whole == small) << "images differ";
  Image img(tmp / "pieces.sqsh");
  auto got = testing::read_image(img);
  for (const File& f : fs) {
    auto it = got.find(f.path);
    ASSERT_NE(it, got.end()) << f.path;
    EXPECT_TRUE(it->second.content == f.content) << f.path << ": content differs";
  }
}

TEST(WriterFeed, AFailedWriteOnTheDataThreadReachesTheCaller) {
  UniqueFd fd(::open("/dev/full", O_WRONLY | O_CLOEXEC));
  if (!fd) GTEST_SKIP() << "/dev/full not available";
  std::string data = testing::make_bytes(24 << 20, false, 7);
  try {
    Writer w(fd.get(), "out.sqsh", WriterOptions{});
    w.begin_file(file_node("/big", data.size()));
    for (size_t off = 0; off < data.size(); off += 1 << 20) w.write(data.data() + off, 1 << 20);
    w.end_file();
    w.finish();
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_THAT(std::string(e.what()),
                ::testing::MatchesRegex("out\\.sqsh: [a-z /]+: I/O error \\(No space left on device\\)"));
  }
}

size_t threads() {
  size_t n = 0;
  for (const auto& e : std::filesystem::directory_iterator("/proc/self/task")) n += e.is_directory() ? 1 : 0;
  return n;
}

TEST(WriterFeed, AWriterDroppedWithDataQueuedStops) {
  TempDir tmp;
  const size_t before = threads();
  UniqueFd fd(::open((tmp / "x.sqsh").c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
  std::string data = testing::make_bytes(20 << 20, false, 9);
  for (int open_file = 0; open_file < 2; ++open_file) {
    Writer w(fd.get(), "x.sqsh", WriterOptions{});
    w.begin_file(file_node("/a", data.size()));
    w.write(data.data(), data.size());
    if (!open_file) w.end_file();
    EXPECT_GT(threads(), before);  // the data thread and the compressors run
  }  // each writer goes with its data queued or in flight: no hang, no leak (LeakSanitizer)
  EXPECT_EQ(threads(), before);  // and every thread it started has ended
}

}  // namespace
}  // namespace trainimg::sqsh
