// SPDX-License-Identifier: GPL-3.0-or-later
// The writable sqfs_file_t writes on a thread of its own: what libsquashfs
// reads back (to compare the blocks and fragments it deduplicates) and the
// truncates it makes (to drop a duplicate file's blocks) must see every
// queued write, and a failed write must surface with its errno.
#include "sqsh/fd_file.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <linux/fiemap.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "common/fd.h"
#include "sqsh/test_support.h"

namespace trainimg::sqsh {
namespace {

using testing::TempDir;

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

int put(sqfs_file_t* f, uint64_t off, const std::string& s) {
  return f->write_at(f, off, s.data(), s.size());
}

std::string get(sqfs_file_t* f, uint64_t off, size_t n) {
  std::string s(n, '?');
  EXPECT_EQ(f->read_at(f, off, s.data(), n), 0);
  return s;
}

// A new writable file at `path`, as the writer opens its output.
struct Output {
  explicit Output(const std::string& path)
      : fd(::open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644)),
        file(fd ? make_fd_file(fd.get(), false, false) : nullptr) {}
  UniqueFd fd;
  FilePtr file;
};

// A model of the file (a string) and the real one, driven by the same random
// writes, reads and truncates (appends mostly, as a squashfs image is
// written, with rewrites of earlier ranges and truncates back as the block
// writer's deduplication makes them, and writes past the end that leave a
// hole): every read and the final file agree.
TEST(FdFile, ReadsAndTruncatesSeeEveryQueuedWrite) {
  TempDir tmp;
  const std::string path = tmp / "out";
  Output out(path);
  sqfs_file_t* f = out.file.get();
  ASSERT_TRUE(f);
  std::mt19937 rng(7);
  std::string model;
  auto chunk = [&](size_t n) {
    std::string s(n, '\0');
    for (auto& c : s) c = static_cast<char>('a' + rng() % 26);
    return s;
  };
  // Stretches where the thread is held, so that reads and truncates meet
  // queued writes (up to 6 MiB of them), and stretches where it runs.
  bool held = false;
  size_t queued = 0;
  for (int step = 0; step < 4000; ++step) {
    if (step % 25 == 0 || queued > (6u << 20)) {
      held = !held && queued <= (6u << 20);
      if (held) {
        ASSERT_EQ(fd_file_flush(f), 0);  // the ring empty: 6 MiB more fit
      }
      fd_file_hold_writes(f, held);
      queued = 0;
    }
    const unsigned what = rng() % 100;
    if (what < 70 || model.empty()) {  // append; now and then (not held) larger than one queued op
      const size_t n = !held && rng() % 50 == 0 ? (3u << 20) : 1 + rng() % 300000;
      queued += n;
      std::string s = chunk(n);
      ASSERT_EQ(put(f, model.size(), s), 0);
      model += s;
    } else if (what < 74) {  // append after a hole (reads as zeros)
      const size_t gap = 1 + rng() % 100000, n = 1 + rng() % 100000;
      std::string s = chunk(n);
      ASSERT_EQ(put(f, model.size() + gap, s), 0);
      model += std::string(gap, '\0') + s;
      queued += n;
    } else if (what < 80) {  // rewrite inside
      const size_t off = rng() % model.size(), n = 1 + rng() % std::min<size_t>(model.size() - off, 70000);
      queued += n;
      std::string s = chunk(n);
      ASSERT_EQ(put(f, off, s), 0);
      model.replace(off, n, s);
    } else if (what < 95) {  // read back
      const size_t off = rng() % model.size(), n = 1 + rng() % std::min<size_t>(model.size() - off, 200000);
      ASSERT_EQ(get(f, off, n), model.substr(off, n)) << "step " << step;
    } else {  // truncate back
      const size_t to = model.size() - rng() % std::min<size_t>(model.size(), 500000);
      ASSERT_EQ(f->truncate(f, to), 0);
      model.resize(to);
    }
    ASSERT_EQ(f->get_size(f), model.size());
  }
  fd_file_hold_writes(f, false);
  ASSERT_EQ(fd_file_flush(f), 0);
  EXPECT_TRUE(slurp(path) == model) << "the file differs from the model (" << slurp(path).size() << " vs "
                                    << model.size() << " bytes)";
  // Out of range stays refused.
  char c;
  EXPECT_EQ(f->read_at(f, model.size(), &c, 1), SQFS_ERROR_OUT_OF_BOUNDS);
}

// The two cases the random walk above rarely meets, made on purpose with
// the thread held: a hole left by a write past the end, before anything is
// in the file, reads as zeros; and so does a hole over bytes the file still
// holds because the truncate before it is queued.
TEST(FdFile, HolesReadAsZerosWhateverTheFileStillHolds) {
  TempDir tmp;
  const std::string path = tmp / "out";
  Output out(path);
  sqfs_file_t* f = out.file.get();
  ASSERT_TRUE(f);
  fd_file_hold_writes(f, true);
  ASSERT_EQ(put(f, 0, std::string(10, 'x')), 0);
  ASSERT_EQ(put(f, 50, "y"), 0);
  EXPECT_EQ(get(f, 0, 51), std::string(10, 'x') + std::string(40, '\0') + "y");
  fd_file_hold_writes(f, false);

  ASSERT_EQ(put(f, 51, std::string(149, 'A')), 0);
  ASSERT_EQ(fd_file_flush(f), 0);  // 200 bytes in the file
  fd_file_hold_writes(f, true);
  ASSERT_EQ(f->truncate(f, 100), 0);
  ASSERT_EQ(put(f, 150, std::string(10, 'B')), 0);
  EXPECT_EQ(get(f, 100, 60), std::string(50, '\0') + std::string(10, 'B'));
  fd_file_hold_writes(f, false);
  ASSERT_EQ(fd_file_flush(f), 0);
  const std::string want = std::string(10, 'x') + std::string(40, '\0') + "y" + std::string(49, 'A') +
                           std::string(50, '\0') + std::string(10, 'B');
  EXPECT_TRUE(slurp(path) == want);
}

// A write the thread fails (here: a full device) fails a later call and the
// flush, naming the errno; nothing is written after it.
TEST(FdFile, AFailedWriteSurfacesInTheNextCallAndTheFlushWithItsErrno) {
  UniqueFd fd(::open("/dev/full", O_WRONLY | O_CLOEXEC));
  if (!fd) GTEST_SKIP() << "/dev/full not available";
  FilePtr file = make_fd_file(fd.get(), false, false);
  sqfs_file_t* f = file.get();
  ASSERT_TRUE(f);
  (void)put(f, 0, "super block");
  int rc = 0;
  for (int i = 0; i < 1000 && rc == 0; ++i) rc = put(f, 11 + i, "x");  // until the thread has failed
  if (rc == 0) rc = fd_file_flush(f);
  EXPECT_EQ(rc, SQFS_ERROR_IO);
  EXPECT_EQ(fd_file_errno(f), ENOSPC);
  EXPECT_EQ(fd_file_flush(f), SQFS_ERROR_IO);
  EXPECT_EQ(put(f, 2000, "y"), SQFS_ERROR_IO);
}

// Sync-ahead: once N more bytes are in write-back (the thread's writes and
// copy_in()'s copies), a thread of its own fdatasyncs the file while it is
// written; the flush waits for it. The bytes are what was written.
TEST(FdFile, ALargeOutputIsSyncedAheadWhileItIsWritten) {
  TempDir tmp;
  const std::string path = tmp / "out", from = tmp / "from";
  std::string bytes(40u << 20, '\0');
  std::mt19937_64 rng(7);
  for (char& c : bytes) c = static_cast<char>(rng());
  { std::ofstream(from, std::ios::binary) << bytes.substr(0, 4u << 20); }
  UniqueFd src(::open(from.c_str(), O_RDONLY | O_CLOEXEC));
  UniqueFd fd(::open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
  if (::sync_file_range(fd.get(), 0, 0, SYNC_FILE_RANGE_WRITE) != 0)
    GTEST_SKIP() << "no write-back hints on this file system";
  FilePtr file = make_fd_file(fd.get(), false, false);
  sqfs_file_t* f = file.get();
  ASSERT_TRUE(f);
  fd_file_sync_every(f, 1u << 20);
  for (size_t off = 0; off < bytes.size(); off += 1u << 20)
    ASSERT_EQ(f->write_at(f, off, bytes.data() + off, 1u << 20), 0);
  ASSERT_EQ(fd_file_flush(f), 0);
  const uint64_t after_writes = fd_file_syncs(f);
  EXPECT_GE(after_writes, 1u);  // write-back is handed 32 MiB at a time
  ASSERT_EQ(fd_file_copy_in(f, src.get(), 0, 4u << 20, bytes.size()), 0);
  ASSERT_EQ(fd_file_flush(f), 0);
  EXPECT_GT(fd_file_syncs(f), after_writes);
  file.reset();
  EXPECT_TRUE(slurp(path) == bytes + bytes.substr(0, 4u << 20));
}

// The write-back of a file without a write-behind thread (a layer's
// segment, written by the layer's reader) is started on the starter's
// thread: the writer hands a range over and goes on; the range is started
// even when the writer has closed its descriptor meanwhile; a full queue
// refuses a range (the writer offers it again later) instead of waiting.
TEST(WriteBackStarter, StartsOfferedRangesOnItsOwnThreadAndRefusesWhenFull) {
  TempDir tmp;
  const std::string path = tmp / "out";
  WriteBackStarter starter(2);
  {
    UniqueFd fd(::open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
    ASSERT_TRUE(fd);
    const std::string bytes(1u << 20, 'x');
    ASSERT_EQ(::pwrite(fd.get(), bytes.data(), bytes.size(), 0), static_cast<ssize_t>(bytes.size()));
    starter.hold(true);
    EXPECT_TRUE(starter.offer(fd.get(), 0, 512u << 10));
    EXPECT_TRUE(starter.offer(fd.get(), 512u << 10, 512u << 10));
    EXPECT_FALSE(starter.offer(fd.get(), 0, 1u << 20));  // two queued: full
    EXPECT_FALSE(starter.offer(-1, 0, 1u << 20));        // nothing to duplicate
  }  // the writer's descriptor closes with two ranges queued
  starter.hold(false);
  EXPECT_EQ(starter.wait_idle(), 2u);
  UniqueFd again(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  EXPECT_TRUE(starter.offer(again.get(), 0, 1u << 20));  // room again
  EXPECT_EQ(starter.wait_idle(), 3u);
}

TEST(WriteBackStarter, ALeanFileHandsItsWriteBackToTheProcessStarter) {
  TempDir tmp;
  const std::string path = tmp / "out";
  UniqueFd fd(::open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
  ASSERT_TRUE(fd);
  const uint64_t before = WriteBackStarter::process().wait_idle();
  FilePtr file = make_fd_file(fd.get(), false, false, /*write_behind=*/false, /*write_back=*/true);
  sqfs_file_t* f = file.get();
  ASSERT_TRUE(f);
  const std::string chunk(1u << 20, 'y');
  for (uint64_t off = 0; off < (70u << 20); off += chunk.size())
    ASSERT_EQ(f->write_at(f, off, chunk.data(), chunk.size()), 0);
  file.reset();
  EXPECT_EQ(WriteBackStarter::process().wait_idle(), before + 2);  // every 32 MiB: at 32 and 64 MiB
  EXPECT_EQ(std::filesystem::file_size(path), 70u << 20);
}

// Bytes of [lo, hi) of `fd` in extents the file system marks shared.
uint64_t shared_bytes(int fd, uint64_t lo, uint64_t hi) {
  constexpr unsigned kMax = 256;
  std::vector<char> buf(sizeof(fiemap) + kMax * sizeof(fiemap_extent), 0);
  auto* fm = reinterpret_cast<fiemap*>(buf.data());
  fm->fm_start = lo;
  fm->fm_length = hi - lo;
  fm->fm_flags = FIEMAP_FLAG_SYNC;
  fm->fm_extent_count = kMax;
  if (::ioctl(fd, FS_IOC_FIEMAP, fm) != 0) return 0;
  uint64_t n = 0;
  for (unsigned i = 0; i < fm->fm_mapped_extents; ++i) {
    const fiemap_extent& e = fm->fm_extents[i];
    const uint64_t a = std::max<uint64_t>(e.fe_logical, lo),
                   b = std::min<uint64_t>(e.fe_logical + e.fe_length, hi);
    if ((e.fe_flags & FIEMAP_EXTENT_SHARED) && b > a) n += b - a;
  }
  return n;
}

// On a file system with reflinks (XFS here: .ci/start-reflink.sh mounts one
// and names it in /tmp/trainimg-ci-reflink, or TRAINIMG_REFLINK_DIR), a copy
// whose offsets agree modulo 4 KiB but start inside a block shares every
// whole block it covers: the bytes before the first whole block and after
// the last are copied in calls of their own. (Until this, block reuse
// copied every byte there too: the kernel copies a call that starts inside
// a block in full.)
TEST(FdFile, CopiesShareWholeBlocksOnAFileSystemWithReflinks) {
  const std::string dir = testing::reflink_dir();
  if (dir.empty()) GTEST_SKIP() << "no file system with reflinks (run .ci/start-reflink.sh as root)";
  std::string tmpl = dir + "/fd-file-XXXXXX";
  ASSERT_NE(::mkdtemp(tmpl.data()), nullptr) << dir;
  struct Cleanup {
    std::string d;
    ~Cleanup() { std::filesystem::remove_all(d); }
  } cleanup{tmpl};
  const std::string from = tmpl + "/from", path = tmpl + "/out";
  std::string bytes(4u << 20, '\0');
  std::mt19937_64 rng(11);
  for (char& c : bytes) c = static_cast<char>(rng());
  { std::ofstream(from, std::ios::binary) << bytes; }
  UniqueFd src(::open(from.c_str(), O_RDONLY | O_CLOEXEC));
  ASSERT_EQ(::fsync(src.get()), 0);
  UniqueFd fd(::open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
  FilePtr file = make_fd_file(fd.get(), false, false);
  sqfs_file_t* f = file.get();
  ASSERT_TRUE(f);
  const std::string head(123, 'h');
  ASSERT_EQ(put(f, 0, head), 0);
  const uint64_t src_off = 2 * 4096 + 123, len = (3u << 20) + 1000;  // both offsets 123 past a block
  ASSERT_EQ(fd_file_copy_in(f, src.get(), src_off, len, head.size()), 0);
  ASSERT_EQ(fd_file_flush(f), 0);
  EXPECT_EQ(f->get_size(f), head.size() + len);
  // Whole blocks from 4096 up to the last one the copy fills.
  const uint64_t lo = 4096, hi = (head.size() + len) / 4096 * 4096;
  EXPECT_EQ(shared_bytes(fd.get(), lo, hi), hi - lo);
  file.reset();
  EXPECT_TRUE(slurp(path) == head + bytes.substr(src_off, len));
}

}  // namespace
}  // namespace trainimg::sqsh
