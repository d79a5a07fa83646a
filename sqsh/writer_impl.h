// SPDX-License-Identifier: GPL-3.0-or-later
// Writer's internals, shared by writer.cc (setup, entries) and
// writer_finish.cc (serialising the tree). Internal to sqsh/.
#pragma once

#include <atomic>
#include <cstring>
#include <deque>
#include <exception>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "common/error.h"
#include "sqsh/fd_file.h"
#include "sqsh/handles.h"
#include "sqsh/sqsh.h"
#include "sqsh/writer_feed.h"

namespace trainimg::sqsh {

inline constexpr uint32_t kNoXattr = 0xFFFFFFFF;

struct WNode;
using Children = std::map<std::string, WNode*, std::less<>>;  // byte order, as squashfs requires

// One per inode; an image holds hundreds of thousands, so what only some
// kinds need (a listing, a symlink target) is a pointer, null elsewhere.
struct WNode {
  NodeType type = NodeType::File;
  uint16_t mode = 0;  // permission bits only
  uint32_t uid = 0, gid = 0, mtime = 0, devno = 0;
  uint32_t xattr_idx = kNoXattr;
  uint32_t links = 0;
  uint32_t inode_num = 0;
  uint64_t inode_ref = 0;
  uint64_t tag = Node::kNoTag;          // files: the caller's (WriterOptions::on_extent)
  std::unique_ptr<std::string> target;  // symlinks
  // Created and grown (realloc) by the block processor through &file_inode
  // until sqfs_block_processor_finish; ours (sqfs_free) afterwards.
  sqfs_inode_generic_t* file_inode = nullptr;
  std::unique_ptr<Children> kids;  // directories, once they have a child
  Children& children() {
    if (!kids) kids = std::make_unique<Children>();
    return *kids;
  }
  WNode() = default;
  WNode(const WNode&) = delete;
  WNode& operator=(const WNode&) = delete;
  ~WNode() { sqfs_free(file_inode); }
};

// A file of a blocks-only writer: all finish_blocks_only() needs of it, 16
// bytes where a WNode is 80 (500,000 files in a segment: 32 MB less).
struct BlockFile {
  sqfs_inode_generic_t* file_inode = nullptr;  // as WNode::file_inode
  uint64_t tag = Node::kNoTag;
  BlockFile() = default;
  BlockFile(const BlockFile&) = delete;
  BlockFile& operator=(const BlockFile&) = delete;
  ~BlockFile() { sqfs_free(file_inode); }
};

inline uint16_t type_bits(NodeType t) {
  switch (t) {
    case NodeType::Dir: return SQFS_INODE_MODE_DIR;
    case NodeType::File: return SQFS_INODE_MODE_REG;
    case NodeType::Symlink: return SQFS_INODE_MODE_LNK;
    case NodeType::Fifo: return SQFS_INODE_MODE_FIFO;
    case NodeType::CharDev: return SQFS_INODE_MODE_CHR;
    case NodeType::BlockDev: return SQFS_INODE_MODE_BLK;
    case NodeType::Socket: return SQFS_INODE_MODE_SOCK;
    case NodeType::Hardlink: break;
  }
  return 0;
}

struct Writer::Impl {
  std::string name;
  WriterOptions opt;
  uint32_t mtime = 0;
  // Declaration order matters for destruction (reverse): the processor and
  // writers go before the nodes, compressors and file they point into.
  std::deque<WNode> nodes;            // stable addresses, no allocation per node
  std::deque<BlockFile> block_files;  // blocks_only: the files instead of nodes
  FilePtr file;
  CompressorPtr cmp, uncmp, data_cmp;
  BlockWriterPtr blkwr;
  FragTablePtr frag;
  BlockProcessorPtr proc;
  IdTablePtr ids;
  XattrWriterPtr xwr;
  MetaWriterPtr im, dm;
  DirWriterPtr dirwr;
  // Calls the block processor from a thread of its own; destroyed (joined)
  // before the processor and the nodes it writes into.
  std::unique_ptr<DataFeeder> feeder;
  sqfs_super_t super{};
  WNode* root = nullptr;
  bool in_file = false;
  bool failed = false;
  bool finished = false;
  uint32_t file_flags = 0;
  Stats stats;

  // Block reuse (writer_reuse.cc).
  struct ReuseSource {
    int fd = -1;
    std::string name;
    ImageInfo info;
    std::vector<Fragment> fragments;
    ReuseStats stats{};   ///< what was copied from it
    bool copied = false;  ///< by copy_reused_now(): its files have their inodes
    /// Byte ranges of it already in this image ([src, end) landed at dst),
    /// sorted by src: by prefetch_reused() or copy_source().
    struct Placed {
      uint64_t src = 0, end = 0, dst = 0;
    };
    std::vector<Placed> placed;
  };
  struct ReusedFile {
    WNode* node = nullptr;
    int source = 0;
    FileExtent x;
  };
  std::vector<ReuseSource> reuse_sources;
  std::deque<ReusedFile> reused;  // hundreds of thousands: never moved as it grows
  ReuseStats reuse;
  // Copies on threads of their own (prefetch_reused, copy_reused_soon),
  // oldest first. Declared last: stopped and joined before anything they
  // write into goes.
  struct AsyncCopy {
    int source = -1;
    std::shared_ptr<void> keep;  ///< the caller's hold on the source: released once copied
    std::atomic<bool> stop{false};
    std::exception_ptr error;
    std::thread thread;
    ~AsyncCopy() {
      stop = true;
      if (thread.joinable()) thread.join();
    }
  };
  static constexpr size_t kMaxAsyncCopies = 4;
  std::deque<std::unique_ptr<AsyncCopy>> copies;

  [[noreturn]] void fail(const std::string& msg) const { throw Error(name, msg); }
  // Any Error leaves the libsquashfs objects in an unknown state: refuse more.
  template <class F>
  auto guarded(F f) {
    if (failed) fail("the writer stopped after an earlier error");
    if (finished) fail("the image is already finished");
    try {
      return f();
    } catch (...) {
      failed = true;
      throw;
    }
  }
  void check_rc(int rc, const std::string& action) const {
    if (rc < 0) fail(rc_message(rc, action, file.get()));
  }

  void setup(int fd);
  void setup_compressors();
  WNode* new_node(NodeType t) {
    nodes.emplace_back();
    nodes.back().type = t;
    return &nodes.back();
  }
  void set_meta(WNode* w, const Node& n);
  WNode* parent_of(const std::string& path, std::string& leaf, bool create);
  /// The directory parent_of() found last and its path: files come
  /// directory by directory, so most lookups end here. A directory leaves
  /// the tree (link() over it, remove()) through a lookup of its own path,
  /// which makes its parent the last one; only remove("/"), which empties
  /// the root without one, must forget it.
  WNode* last_dir = nullptr;
  std::string last_dir_path;
  WNode* find(const std::string& path);
  void link(const std::string& path, WNode* w);
  void add(const Node& n);
  void begin_file(const Node& n);
  void add_hardlink(const std::string& path, const std::string& target);
  void remove(const std::string& path);
  uint64_t finish();
  /// finish() of a blocks_only writer, after the last data block: every
  /// file's extent, no table.
  uint64_t finish_blocks_only();
  /// What an Image of this writer's output says of its data: compressor
  /// (none is written as gzip), block size, data compression, and (once
  /// finished) where the data ends. Writer::data_info(), add_reuse_source().
  ImageInfo data_info() const;
  /// Refuses what a blocks_only writer does not take (anything but files).
  /// Fails on a blocks-only writer; `what` + `more` name the call (built only then).
  void files_only(std::string_view what, std::string_view more = {});
  void number(WNode* dir, std::vector<WNode*>& order);
  /// wide_files: every regular file gets an extended inode (finish()).
  void write_inode(WNode* w, uint32_t parent_num, bool wide_files);
  void pad_to(uint64_t multiple);
  int add_reuse_source(int fd, const std::string& source_name, const ImageInfo& info,
                       std::vector<Fragment> frags);
  void add_reused_file(const Node& n, int source, FileExtent x);
  /// Why `x` cannot be an extent of source `s` (its blocks, their size
  /// words, where they lie, its fragment), or "".
  std::string extent_problem(const ReuseSource& s, const FileExtent& x) const;
  /// Appends the ranges of `s` that hold `x`: its blocks and, unless
  /// `frag_seen` says it is already in, the fragment block of its tail.
  static void needed_ranges(const ReuseSource& s, const FileExtent& x, std::vector<bool>& frag_seen,
                            std::vector<ReuseSource::Placed>& out);
  /// In finish(), after the block processor's last block: copies the blocks
  /// of every reused file still in the tree and gives each its inode.
  void copy_reused();
  /// Copies source `si`'s files' blocks at the end of the file and gives
  /// them their inodes; `every_file`: also those no longer in the tree
  /// (copy_reused_now, before finish() has counted the links).
  /// With `async`, the bytes are copied by start_copy() (the inodes are
  /// given here all the same), releasing `keep` once done.
  void copy_source(size_t si, bool every_file, bool async = false, std::shared_ptr<void> keep = {});
  void copy_reused_now(int source);
  void prefetch_reused(int source, const std::vector<const FileExtent*>& files);
  /// Copies `todo` (placed by reserve_place) from source `source` on a
  /// thread of its own, then releases `keep`; the oldest copy in flight is
  /// joined first when kMaxAsyncCopies are.
  void start_copy(int source, std::vector<ReuseSource::Placed> todo, std::shared_ptr<void> keep);
  /// Waits for the copies in flight from `source` (every source: -1);
  /// rethrows the first error.
  void join_copies(int source = -1);
  void copy_reused_soon(int source, std::shared_ptr<void> keep);
  /// copy_reused_now() (after joining the source's copies in flight) or,
  /// with `async`, copy_reused_soon().
  void copy_whole_source(int source, bool async, std::shared_ptr<void> keep);
  /// Waits for the block processor's blocks in flight (reused blocks go after).
  void drain_blocks();
  /// Where the ranges ([src, end)) of source `s` that no placed range holds
  /// whole go, merged where they touch, at the end of the file (the padding
  /// before each written, the space reserved), recorded in s.placed; the
  /// ranges to copy are returned, for copy_placed() or start_copy().
  std::vector<ReuseSource::Placed> reserve_place(ReuseSource& s, std::vector<ReuseSource::Placed> ranges);
  /// Returns an error message, or "" once every range is copied (or `stop`).
  std::string copy_placed(int src_fd, const std::string& src_name,
                          const std::vector<ReuseSource::Placed>& ranges,
                          const std::atomic<bool>* stop) const;
};

}  // namespace trainimg::sqsh
