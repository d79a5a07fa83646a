// SPDX-License-Identifier: GPL-3.0-or-later
// Block reuse in the writer (writer_reuse.cc): the blocks of an earlier
// image, copied at finish() or at once by copy_reused_now(), read back as the
// files they were, through our reader and through unsquashfs.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "common/error.h"
#include "common/fd.h"
#include "sqsh/sqsh.h"
#include "sqsh/test_support.h"

namespace trainimg::sqsh {
namespace {

using testing::TempDir;

constexpr uint32_t kBs = 128u << 10;

// Every file is tagged with its path's number here, so that finish() can
// say where each path's bytes went (WriterOptions::on_extent).
std::vector<std::string>& tagged_paths() {
  static std::vector<std::string> paths;
  return paths;
}

uint64_t path_tag(const std::string& path) {
  auto& paths = tagged_paths();
  auto it = std::find(paths.begin(), paths.end(), path);
  if (it != paths.end()) return static_cast<uint64_t>(it - paths.begin());
  paths.push_back(path);
  return paths.size() - 1;
}

Node file(const std::string& path, uint64_t size) {
  Node n;
  n.path = path;
  n.tag = path_tag(path);
  n.type = NodeType::File;
  n.mode = 0644;
  n.size = size;
  return n;
}

void put(Writer& w, const std::string& path, const std::string& bytes) {
  w.begin_file(file(path, bytes.size()));
  w.write(bytes.data(), bytes.size());
  w.end_file();
}

// `extents`: where finish() put each path's bytes.
WriterOptions options(std::map<std::string, FileExtent>* extents = nullptr) {
  WriterOptions o;
  o.block_size = kBs;
  if (extents)
    o.on_extent = [extents](uint64_t tag, FileExtent x) {
      (*extents)[tagged_paths().at(tag)] = std::move(x);
    };
  o.num_workers = 2;
  return o;
}

// Several blocks with a tail (fragment), whole blocks, a tail alone, empty.
const std::map<std::string, std::string>& source_files() {
  static const std::map<std::string, std::string> files = {
      {"/a", testing::make_bytes(3 * kBs + 100, false, 1)},
      {"/b", testing::make_bytes(200, true, 2)},
      {"/c", testing::make_bytes(2 * kBs, true, 3)},
      {"/d", ""},
  };
  return files;
}

class WriterReuse : public ::testing::Test {
 protected:
  void SetUp() override {
    src_path_ = tmp_ / "src.sqsh";
    UniqueFd fd(::open(src_path_.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
    ASSERT_TRUE(fd);
    Writer w(fd.get(), src_path_, options(&extents_));
    for (const auto& [path, bytes] : source_files()) put(w, path, bytes);
    w.finish();
    ASSERT_EQ(extents_.size(), source_files().size());
  }

  // An image with a file of its own, the source's files under /r, another
  // file of its own; `now`: the reused blocks copied between the two.
  std::string make(bool now) {
    const std::string out = tmp_ / (now ? "now.sqsh" : "finish.sqsh");
    UniqueFd src(::open(src_path_.c_str(), O_RDONLY | O_CLOEXEC));
    Image img(src.get(), src_path_);
    UniqueFd fd(::open(out.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
    std::map<std::string, FileExtent> at;
    Writer w(fd.get(), out, options(&at));
    put(w, "/own1", testing::make_bytes(2 * kBs + 7, false, 4));
    const int id = w.add_reuse_source(src.get(), src_path_, img.info(), img.fragments());
    for (const auto& [path, bytes] : source_files())
      w.add_reused_file(file("/r" + path, bytes.size()), id, extents_[path]);
    if (now) {
      w.copy_reused_now(id);
      src.reset();  // not read again
    }
    put(w, "/own2", testing::make_bytes(kBs + 9, false, 5));
    w.finish();
    EXPECT_EQ(w.reuse_stats(id).files, source_files().size());
    // Copied at once: before the blocks written after the call; at finish():
    // after every block the image compressed.
    const uint64_t reused = at.at("/r/a").blocks_start, own2 = at.at("/own2").blocks_start;
    EXPECT_EQ(reused < own2, now) << "reused at " << reused << ", /own2 at " << own2;
    return out;
  }

  TempDir tmp_;
  std::string src_path_;
  std::map<std::string, FileExtent> extents_;
};

// A blocks-only writer (an import's layer segment) writes the files' data
// and fragment blocks and no table: an image that copies them from it with
// the extents it reported, its data_info() and fragments() reads back every
// byte, and the writer takes nothing but regular files.
TEST_F(WriterReuse, ABlocksOnlyWritersFilesAreCopiedWholeIntoAnImage) {
  const std::string blocks = tmp_ / "blocks";
  UniqueFd bfd(::open(blocks.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600));
  ASSERT_TRUE(bfd);
  std::map<std::string, FileExtent> at;
  WriterOptions bo = options(&at);
  bo.blocks_only = true;
  Writer b(bfd.get(), blocks, bo);
  for (const auto& [path, bytes] : source_files()) put(b, path, bytes);
  put(b, "/a-again", source_files().at("/a"));  // deduplicated: the same blocks
  Node dir;
  dir.path = "/dir";
  dir.type = NodeType::Dir;
  EXPECT_THROW(b.add(dir), Error);
  EXPECT_THROW(b.add_hardlink("/link", "/a"), Error);
  EXPECT_THROW(b.remove("/a"), Error);
  EXPECT_THROW(b.add_reused_file(file("/x", 1), 0, FileExtent{}), Error);
  // The errors above left the writer unusable (as any Error does): a fresh one.
  Writer b2(bfd.get(), blocks, bo);
  at.clear();
  for (const auto& [path, bytes] : source_files()) put(b2, path, bytes);
  put(b2, "/a-again", source_files().at("/a"));
  const uint64_t end = b2.finish();
  ASSERT_EQ(at.size(), source_files().size() + 1);
  const ImageInfo info = b2.data_info();
  EXPECT_EQ(info.inode_table_start, end);
  EXPECT_EQ(info.bytes_used, end);
  EXPECT_EQ(info.block_size, kBs);
  EXPECT_EQ(at.at("/a-again").blocks_start, at.at("/a").blocks_start);
  EXPECT_FALSE(b2.fragments().empty());

  const std::string out = tmp_ / "from-blocks.sqsh";
  UniqueFd fd(::open(out.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
  {
    Writer w(fd.get(), out, options());
    const int id = w.add_reuse_source(bfd.get(), blocks, info, b2.fragments());
    for (const auto& [path, bytes] : source_files())
      w.add_reused_file(file(path, bytes.size()), id, at.at(path));
    w.finish();
  }
  Image img(fd.get(), out);
  auto got = testing::read_image(img);
  for (const auto& [path, bytes] : source_files()) {
    ASSERT_TRUE(got.count(path)) << path;
    EXPECT_EQ(got[path].content, bytes) << path;
  }
  for (const char* path : {"a", "b", "c"}) {  // the reference reader agrees
    auto r = testing::run("unsquashfs -cat " + testing::quote(out) + " " + path + " 2>/dev/null");
    ASSERT_EQ(r.status, 0) << "unsquashfs -cat " << path;
    EXPECT_EQ(r.output, source_files().at(std::string("/") + path)) << path;
  }
}

TEST_F(WriterReuse, CopiedNowOrAtFinishTheFilesReadBackAsTheyWere) {
  for (bool now : {false, true}) {
    const std::string out = make(now);
    UniqueFd fd(::open(out.c_str(), O_RDONLY | O_CLOEXEC));
    Image img(fd.get(), out);
    auto got = testing::read_image(img);
    for (const auto& [path, bytes] : source_files()) {
      ASSERT_TRUE(got.count("/r" + path)) << path << ", now " << now;
      EXPECT_EQ(got["/r" + path].content, bytes) << path << ", now " << now;
    }
    EXPECT_EQ(got["/own1"].content, testing::make_bytes(2 * kBs + 7, false, 4)) << "now " << now;
    EXPECT_EQ(got["/own2"].content, testing::make_bytes(kBs + 9, false, 5)) << "now " << now;
    // The reference reader agrees.
    for (const char* path : {"r/a", "r/b", "own2"}) {
      auto r = testing::run("unsquashfs -cat " + testing::quote(out) + " " + path + " 2>/dev/null");
      ASSERT_EQ(r.status, 0) << "unsquashfs -cat " << path << ", now " << now;
      EXPECT_EQ(r.output, got[std::string("/") + path].content) << path << ", now " << now;
    }
  }
}

TEST_F(WriterReuse, CopyNowRefusesAnUnknownSourceAnOpenFileAndLaterFilesOfTheSource) {
  const std::string out = tmp_ / "bad.sqsh";
  UniqueFd fd(::open(out.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
  {
    Writer w(fd.get(), out, options());
    EXPECT_THROW(w.copy_reused_now(3), Error);
  }
  UniqueFd src(::open(src_path_.c_str(), O_RDONLY | O_CLOEXEC));
  Image img(src.get(), src_path_);
  auto refused = [&](bool open_file, const std::string& why) {
    Writer w(fd.get(), out, options());
    const int id = w.add_reuse_source(src.get(), src_path_, img.info(), img.fragments());
    try {
      if (open_file) {
        w.begin_file(file("/open", 10));
        w.copy_reused_now(id);
      } else {
        w.add_reused_file(file("/b", 200), id, extents_["/b"]);
        w.copy_reused_now(id);
        w.add_reused_file(file("/late", 200), id, extents_["/b"]);  // its blocks are copied already
      }
      ADD_FAILURE() << "not refused: " << why;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(why), std::string::npos) << e.what();
    }
  };
  refused(true, "while a file is open");
  refused(false, "were already copied");
}

// Prefetched (the Writer copies on a thread of its own and the call returns,
// as the import's merge goes on meanwhile):
// the files then added from the prefetched extents are not copied again and
// read back as they were; a prefetched file the image does not keep (/c) is
// counted as unused bytes; a file added later that was not prefetched is
// still copied (/b here, /a in the second image).
TEST_F(WriterReuse, PrefetchedBlocksServeLaterFilesAndWhatNoFileUsesIsCounted) {
  const std::string out = tmp_ / "prefetched.sqsh";
  UniqueFd src(::open(src_path_.c_str(), O_RDONLY | O_CLOEXEC));
  Image img(src.get(), src_path_);
  UniqueFd fd(::open(out.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
  Writer w(fd.get(), out, options());
  const int id = w.add_reuse_source(src.get(), src_path_, img.info(), img.fragments());
  w.prefetch_reused(id, {&extents_["/a"], &extents_["/c"]});
  const ReuseStats after_prefetch = w.reuse_stats(id);
  for (const char* path : {"/a", "/b"})
    w.add_reused_file(file(path, source_files().at(path).size()), id, extents_[path]);
  w.copy_reused_now(id);
  put(w, "/own", testing::make_bytes(kBs + 9, false, 5));
  w.finish();
  const ReuseStats st = w.reuse_stats(id);
  EXPECT_EQ(st.files, 2u);
  // /c's two blocks were copied and are used by nothing; /a's were copied once.
  uint64_t c_bytes = 0;
  for (uint32_t b : extents_["/c"].blocks) c_bytes += b & ((1u << 24) - 1);
  EXPECT_GT(c_bytes, 0u);
  EXPECT_EQ(st.unused_bytes, c_bytes);
  // /a's blocks and tail were prefetched: nothing of them is copied again;
  // /b's tail is copied now unless it shares /a's fragment block.
  if (extents_["/b"].fragment == extents_["/a"].fragment)
    EXPECT_EQ(st.copied_bytes, after_prefetch.copied_bytes);
  else
    EXPECT_GT(st.copied_bytes, after_prefetch.copied_bytes);
  UniqueFd rd(::open(out.c_str(), O_RDONLY | O_CLOEXEC));
  Image back(rd.get(), out);
  auto got = testing::read_image(back);
  EXPECT_EQ(got["/a"].content, source_files().at("/a"));
  EXPECT_EQ(got["/b"].content, source_files().at("/b"));
  EXPECT_EQ(got.count("/c"), 0u);
  auto r = testing::run("unsquashfs -cat " + testing::quote(out) + " a 2>/dev/null");
  ASSERT_EQ(r.status, 0);
  EXPECT_EQ(r.output, source_files().at("/a"));
  {
    const std::string out2 = tmp_ / "prefetched2.sqsh";
    UniqueFd fd3(::open(out2.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
    Writer w3(fd3.get(), out2, options());
    const int id3 = w3.add_reuse_source(src.get(), src_path_, img.info(), img.fragments());
    w3.prefetch_reused(id3, {&extents_["/c"]});
    const uint64_t before = w3.reuse_stats(id3).copied_bytes;
    w3.add_reused_file(file("/a", source_files().at("/a").size()), id3, extents_["/a"]);
    w3.copy_reused_now(id3);
    w3.finish();
    EXPECT_GT(w3.reuse_stats(id3).copied_bytes, before + 3 * kBs / 2);  // /a's blocks (random bytes)
    EXPECT_EQ(w3.reuse_stats(id3).unused_bytes, c_bytes);
    UniqueFd rd3(::open(out2.c_str(), O_RDONLY | O_CLOEXEC));
    Image back3(rd3.get(), out2);
    EXPECT_EQ(testing::read_image(back3)["/a"].content, source_files().at("/a"));
  }
  // An extent outside the source's data is refused.
  UniqueFd fd2(::open((tmp_ / "bad.sqsh").c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
  Writer w2(fd2.get(), tmp_ / "bad.sqsh", options());
  const int id2 = w2.add_reuse_source(src.get(), src_path_, img.info(), img.fragments());
  FileExtent far = extents_["/a"];
  far.blocks_start = img.info().bytes_used;
  try {
    w2.prefetch_reused(id2, {&far});
    ADD_FAILURE() << "an extent past the data was prefetched";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("lies outside that image's data"), std::string::npos) << e.what();
  }
}

// The prefetch's error (a source cut short: its super block says more than
// the file holds) surfaces at the next copy_reused_now(), and the Writer
// refuses more; a Writer destroyed while it copies stops and joins it.
TEST_F(WriterReuse, PrefetchErrorSurfacesAtTheNextCopyAndAWriterGoneStopsIt) {
  UniqueFd src(::open(src_path_.c_str(), O_RDONLY | O_CLOEXEC));
  Image img(src.get(), src_path_);
  const std::string cut = tmp_ / "cut.sqsh";
  std::filesystem::copy_file(src_path_, cut);
  ASSERT_EQ(::truncate(cut.c_str(), static_cast<off_t>(extents_["/a"].blocks_start + 10)), 0);
  UniqueFd cut_fd(::open(cut.c_str(), O_RDONLY | O_CLOEXEC));
  {
    const std::string out = tmp_ / "from-cut.sqsh";
    UniqueFd fd(::open(out.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
    Writer w(fd.get(), out, options());
    const int id = w.add_reuse_source(cut_fd.get(), cut, img.info(), img.fragments());
    w.prefetch_reused(id, {&extents_["/a"]});  // returns; the copy fails on its thread
    w.add_reused_file(file("/a", source_files().at("/a").size()), id, extents_["/a"]);
    try {
      w.copy_reused_now(id);
      ADD_FAILURE() << "a prefetch from a file cut short succeeded";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("copying the blocks of " + cut), std::string::npos) << e.what();
    }
    EXPECT_THROW(w.finish(), Error);
  }
  {
    const std::string out = tmp_ / "gone.sqsh";
    UniqueFd fd(::open(out.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
    Writer w(fd.get(), out, options());
    const int id = w.add_reuse_source(src.get(), src_path_, img.info(), img.fragments());
    w.prefetch_reused(id, {&extents_["/a"], &extents_["/c"]});
  }  // no finish(): the destructor stops the copy (ASan: nothing used after it is gone)
}

// copy_reused_soon(): six sources (more than the four copies in flight at
// once), each copied on a thread of the Writer's and its `keep` released
// once copied; the files land in call order, ahead of what is written next,
// and read back; finish() waits for every copy. A source cut short fails
// finish() with the copy's error, and its `keep` is released all the same.
TEST_F(WriterReuse, CopiedSoonOnTheWritersThreadsTheFilesReadBackAndEachHoldIsReleased) {
  UniqueFd src(::open(src_path_.c_str(), O_RDONLY | O_CLOEXEC));
  Image img(src.get(), src_path_);
  struct Hold {  // the caller's hold on a source: its fd
    Hold(UniqueFd f, std::atomic<int>* r) : fd(std::move(f)), released(r) {}
    Hold(const Hold&) = delete;
    ~Hold() { ++*released; }
    UniqueFd fd;
    std::atomic<int>* released;
  };
  std::atomic<int> released{0};
  const std::string out = tmp_ / "soon.sqsh";
  {
    UniqueFd fd(::open(out.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
    std::map<std::string, FileExtent> at;
    Writer w(fd.get(), out, options(&at));
    for (int i = 0; i < 6; ++i) {
      UniqueFd own(::open(src_path_.c_str(), O_RDONLY | O_CLOEXEC));
      const int id = w.add_reuse_source(own.get(), src_path_, img.info(), img.fragments());
      w.add_reused_file(file("/s" + std::to_string(i) + "/a", source_files().at("/a").size()), id,
                        extents_["/a"]);
      w.add_reused_file(file("/s" + std::to_string(i) + "/b", source_files().at("/b").size()), id,
                        extents_["/b"]);
      w.copy_reused_soon(id, std::make_shared<Hold>(std::move(own), &released));
    }
    put(w, "/own", testing::make_bytes(kBs + 9, false, 5));
    w.finish();
    EXPECT_EQ(released.load(), 6);
    for (int i = 1; i < 6; ++i)
      EXPECT_LT(at.at("/s" + std::to_string(i - 1) + "/a").blocks_start,
                at.at("/s" + std::to_string(i) + "/a").blocks_start);
    EXPECT_LT(at.at("/s5/a").blocks_start, at.at("/own").blocks_start);
  }
  UniqueFd rd(::open(out.c_str(), O_RDONLY | O_CLOEXEC));
  Image back(rd.get(), out);
  auto got = testing::read_image(back);
  for (int i = 0; i < 6; ++i) {
    EXPECT_EQ(got["/s" + std::to_string(i) + "/a"].content, source_files().at("/a")) << i;
    EXPECT_EQ(got["/s" + std::to_string(i) + "/b"].content, source_files().at("/b")) << i;
  }
  auto r = testing::run("unsquashfs -cat " + testing::quote(out) + " s5/a 2>/dev/null");
  ASSERT_EQ(r.status, 0);
  EXPECT_EQ(r.output, source_files().at("/a"));

  const std::string cut = tmp_ / "cut-soon.sqsh";
  std::filesystem::copy_file(src_path_, cut);
  ASSERT_EQ(::truncate(cut.c_str(), static_cast<off_t>(extents_["/a"].blocks_start + 10)), 0);
  released = 0;
  const std::string out2 = tmp_ / "soon-cut.sqsh";
  UniqueFd fd2(::open(out2.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
  Writer w2(fd2.get(), out2, options());
  UniqueFd cut_fd(::open(cut.c_str(), O_RDONLY | O_CLOEXEC));
  const int id = w2.add_reuse_source(cut_fd.get(), cut, img.info(), img.fragments());
  w2.add_reused_file(file("/a", source_files().at("/a").size()), id, extents_["/a"]);
  w2.copy_reused_soon(id, std::make_shared<Hold>(UniqueFd(), &released));
  try {
    w2.finish();
    ADD_FAILURE() << "a copy from a file cut short succeeded";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("copying the blocks of " + cut), std::string::npos) << e.what();
  }
  EXPECT_EQ(released.load(), 1);
}

}  // namespace
}  // namespace trainimg::sqsh
