// SPDX-License-Identifier: GPL-3.0-or-later
// Block reuse (issue 26): files whose bytes an earlier image already holds,
// compressed, are written by copying those blocks as they are.
//
// The copies go after the last block the block processor writes and before
// the inode table, so they never split a file of this image; or, for a source
// whose files are final (an import's segments, builder/import/segments.h, and
// the earlier image once the import's merge is done), at once by
// copy_reused_now(), after the blocks written so far. Each earlier
// image's needed byte ranges (the files' data blocks and the fragment blocks
// their tails sit in) are sorted, merged where they touch and copied in file
// order, a range of 1 MiB or more placed at the same offset modulo 4 KiB as
// in its source, so that a file system with reflinks (XFS, btrfs) shares the
// extents instead of copying them. A copied fragment block gets an entry of
// its own in this image's fragment table; its other tails, of files this
// image does not have, are carried as they are (docs/import.md).
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <iterator>

#include "common/cpus.h"
#include "sqsh/fd_file.h"
#include "sqsh/writer_impl.h"

namespace trainimg::sqsh {

namespace {

constexpr uint32_t kNoFragment = 0xFFFFFFFF;
constexpr uint32_t kSizeMask = (1u << 24) - 1;  // an on-disk size word's byte count
constexpr uint64_t kAlignAbove = 1u << 20;      // ranges this long keep their offset modulo 4 KiB

uint64_t stored_bytes(const FileExtent& x) {
  uint64_t n = 0;
  for (uint32_t b : x.blocks) n += b & kSizeMask;
  return n;
}

}  // namespace

std::string Writer::Impl::extent_problem(const ReuseSource& s, const FileExtent& x) const {
  const uint64_t bs = opt.block_size;
  const bool tail = x.fragment != kNoFragment;
  const uint64_t want_blocks = tail ? x.size / bs : (x.size + bs - 1) / bs;
  if (x.blocks.size() != want_blocks)
    return "has " + std::to_string(x.blocks.size()) + " blocks, " + std::to_string(want_blocks) + " expected";
  for (uint32_t b : x.blocks)
    if ((b & kSizeMask) > bs || (b & ~kSizeMask & ~(1u << 24)) != 0) return "has a bad block size word";
  const uint64_t stored = stored_bytes(x);
  if (x.blocks_start > s.info.inode_table_start || stored > s.info.inode_table_start - x.blocks_start)
    return "lies outside that image's data";
  if (tail) {
    if (x.fragment >= s.fragments.size())
      return "names fragment " + std::to_string(x.fragment) + ", which it lacks";
    if (x.fragment_offset > bs || x.size % bs > bs - x.fragment_offset)
      return "has its tail outside the fragment";
  }
  return "";
}

void Writer::Impl::needed_ranges(const ReuseSource& s, const FileExtent& x, std::vector<bool>& frag_seen,
                                 std::vector<ReuseSource::Placed>& out) {
  if (uint64_t n = stored_bytes(x)) out.push_back({x.blocks_start, x.blocks_start + n, 0});
  if (x.fragment == kNoFragment || frag_seen[x.fragment]) return;
  frag_seen[x.fragment] = true;
  const Fragment& f = s.fragments[x.fragment];  // in the table: checked by extent_problem()
  if (uint64_t len = f.size & kSizeMask) out.push_back({f.start, f.start + len, 0});
}

int Writer::Impl::add_reuse_source(int fd, const std::string& source_name, const ImageInfo& info,
                                   std::vector<Fragment> frags) {
  auto differs = [&](const std::string& what) {
    fail("cannot reuse the blocks of " + source_name + ": its " + what);
  };
  const ImageInfo own = data_info();
  const Compressor mine = own.compressor;
  if (info.compressor != mine)
    differs("compressor is " + std::string(to_string(info.compressor)) + ", this image's " +
            std::string(to_string(mine)));
  if (info.block_size != opt.block_size)
    differs("block size is " + std::to_string(info.block_size) + ", this image's " +
            std::to_string(opt.block_size));
  const bool data_compressed = own.data_compressed;
  if (info.data_compressed != data_compressed)
    differs(std::string("data blocks are ") + (info.data_compressed ? "compressed" : "stored raw") +
            ", this image's " + (data_compressed ? "compressed" : "stored raw"));
  if (info.inode_table_start > info.bytes_used) differs("super block is inconsistent");
  for (const Fragment& f : frags) {
    uint64_t len = f.size & kSizeMask;
    if (len > opt.block_size || f.start > info.inode_table_start || len > info.inode_table_start - f.start)
      differs("fragment table points outside its data");
  }
  reuse_sources.push_back(ReuseSource{fd, source_name, info, std::move(frags), {}, false, {}});
  return static_cast<int>(reuse_sources.size() - 1);
}

void Writer::Impl::add_reused_file(const Node& n, int source, FileExtent x) {
  files_only(n.path, " (reused)");
  std::string path = normalize_image_path(n.path, name);
  if (source < 0 || static_cast<size_t>(source) >= reuse_sources.size())
    fail(path + ": no such reuse source");
  const ReuseSource& s = reuse_sources[static_cast<size_t>(source)];
  if (s.copied) fail(path + ": the blocks of " + s.name + " were already copied");
  auto bad = [&](const std::string& why) { fail(path + ": the extent in " + s.name + " " + why); };
  if (path == "/") fail("the root must be a directory, not a file");
  if (n.size != x.size)
    bad("is for " + std::to_string(x.size) + " bytes, the file has " + std::to_string(n.size));
  if (std::string why = extent_problem(s, x); !why.empty()) bad(why);
  WNode* w = new_node(NodeType::File);
  set_meta(w, n);
  w->tag = n.tag;
  link(path, w);
  reused.push_back(ReusedFile{w, source, std::move(x)});
  stats.files++;
}

void Writer::Impl::copy_reused_now(int source) {
  copy_whole_source(source, /*async=*/false, nullptr);
}

void Writer::Impl::copy_reused_soon(int source, std::shared_ptr<void> keep) {
  copy_whole_source(source, /*async=*/true, std::move(keep));
}

void Writer::Impl::copy_whole_source(int source, bool async, std::shared_ptr<void> keep) {
  if (source < 0 || static_cast<size_t>(source) >= reuse_sources.size()) fail("no such reuse source");
  ReuseSource& s = reuse_sources[static_cast<size_t>(source)];
  if (in_file) fail("the blocks of " + s.name + " copied while a file is open");
  if (s.copied) return;
  if (!async) join_copies(source);  // a prefetch's: the caller may close the source next
  drain_blocks();
  copy_source(static_cast<size_t>(source), /*every_file=*/true, async, std::move(keep));
  s.copied = true;
  std::erase_if(reused, [&](const ReusedFile& r) { return r.source == source; });
}

void Writer::Impl::drain_blocks() {
  // The blocks in flight first: a file's blocks must stay contiguous. The
  // fragment block being filled stays in memory (a block of its own later).
  feeder->drain();
  check_rc(sqfs_block_processor_sync(proc.get()), "writing the data blocks before the reused ones");
}

void Writer::Impl::copy_reused() {
  for (size_t si = 0; si < reuse_sources.size(); ++si)
    if (!reuse_sources[si].copied) copy_source(si, /*every_file=*/false);
  reused.clear();
}

std::vector<Writer::Impl::ReuseSource::Placed> Writer::Impl::reserve_place(
    ReuseSource& s, std::vector<ReuseSource::Placed> ranges) {
  using Placed = ReuseSource::Placed;
  auto by_src = [](const Placed& a, const Placed& b) { return a.src < b.src; };
  std::sort(ranges.begin(), ranges.end(), by_src);
  // What a placed range holds whole needs no copy.
  std::erase_if(ranges, [&](const Placed& r) {
    auto it = std::upper_bound(s.placed.begin(), s.placed.end(), Placed{r.src, 0, 0}, by_src);
    return it != s.placed.begin() && std::prev(it)->end >= r.end;
  });
  std::vector<Placed> merged;
  for (const Placed& r : ranges) {
    if (!merged.empty() && r.src <= merged.back().end)
      merged.back().end = std::max(merged.back().end, r.end);
    else
      merged.push_back(r);
  }
  uint64_t at = file->get_size(file.get());
  for (Placed& r : merged) {
    const uint64_t len = r.end - r.src;
    if (len >= kAlignAbove) {
      const uint64_t pad =
          (r.src % SQFS_DEVBLK_SIZE + SQFS_DEVBLK_SIZE - at % SQFS_DEVBLK_SIZE) % SQFS_DEVBLK_SIZE;
      if (pad) {
        std::vector<char> zeros(pad, 0);
        check_rc(file->write_at(file.get(), at, zeros.data(), zeros.size()), "padding before reused blocks");
        reuse.dead_bytes += pad;
        s.stats.dead_bytes += pad;
      }
      at += pad;
    }
    r.dst = at;
    at += len;
    reuse.copied_bytes += len;
    s.stats.copied_bytes += len;
  }
  fd_file_reserve(file.get(), at);  // what is written next goes after the copies
  s.placed.insert(s.placed.end(), merged.begin(), merged.end());
  std::stable_sort(s.placed.begin(), s.placed.end(), by_src);
  return merged;
}

std::string Writer::Impl::copy_placed(int src_fd, const std::string& src_name,
                                      const std::vector<ReuseSource::Placed>& ranges,
                                      const std::atomic<bool>* stop) const {
  constexpr uint64_t kPiece = 64u << 20;  // how often `stop` is looked at
  for (const ReuseSource::Placed& r : ranges) {
    for (uint64_t done = 0; done < r.end - r.src;) {
      if (stop && *stop) return "";
      const uint64_t n = std::min(kPiece, r.end - r.src - done);
      if (int rc = fd_file_copy_in(file.get(), src_fd, r.src + done, n, r.dst + done); rc < 0)
        return rc_message(rc, "copying the blocks of " + src_name, file.get());
      done += n;
    }
  }
  return "";
}

void Writer::Impl::start_copy(int source, std::vector<ReuseSource::Placed> todo, std::shared_ptr<void> keep) {
  while (copies.size() >= kMaxAsyncCopies) {
    std::unique_ptr<AsyncCopy> c = std::move(copies.front());
    copies.pop_front();
    c->thread.join();
    if (c->error) std::rethrow_exception(c->error);
  }
  const ReuseSource& s = reuse_sources[static_cast<size_t>(source)];
  auto c = std::make_unique<AsyncCopy>();
  c->source = source;
  c->keep = std::move(keep);
  AsyncCopy* raw = c.get();
  // The source's fd and name by value: reuse_sources may grow meanwhile.
  c->thread = std::thread([this, raw, fd = s.fd, src_name = s.name, todo = std::move(todo)] {
    name_this_thread("ti-copy");
    try {
      if (std::string e = copy_placed(fd, src_name, todo, &raw->stop); !e.empty()) fail(e);
    } catch (...) {
      raw->error = std::current_exception();
    }
    raw->keep.reset();
  });
  copies.push_back(std::move(c));
}

void Writer::Impl::join_copies(int source) {
  std::exception_ptr first;
  for (auto it = copies.begin(); it != copies.end();) {
    if (source >= 0 && (*it)->source != source) {
      ++it;
      continue;
    }
    (*it)->thread.join();
    if ((*it)->error && !first) first = (*it)->error;
    it = copies.erase(it);
  }
  if (first) std::rethrow_exception(first);
}

void Writer::Impl::prefetch_reused(int source, const std::vector<const FileExtent*>& files) {
  if (source < 0 || static_cast<size_t>(source) >= reuse_sources.size()) fail("no such reuse source");
  ReuseSource& s = reuse_sources[static_cast<size_t>(source)];
  if (in_file) fail("the blocks of " + s.name + " prefetched while a file is open");
  if (s.copied) fail("the blocks of " + s.name + " were already copied");
  std::vector<ReuseSource::Placed> ranges;
  std::vector<bool> frag_seen(s.fragments.size(), false);
  for (const FileExtent* x : files) {
    if (std::string why = extent_problem(s, *x); !why.empty())
      fail("a prefetched extent in " + s.name + " " + why);
    needed_ranges(s, *x, frag_seen, ranges);
  }
  drain_blocks();
  start_copy(source, reserve_place(s, std::move(ranges)), nullptr);
}

void Writer::Impl::copy_source(size_t si, bool every_file, bool async, std::shared_ptr<void> keep) {
  ReuseSource& s = reuse_sources[si];
  using Placed = ReuseSource::Placed;
  // What this image uses: in finish(), the files still linked (one replaced
  // or removed after it was added has no link left); before it, every file
  // added (copy_reused_now: links are not counted yet).
  std::vector<Placed> ranges;
  std::vector<uint32_t> frag_new(s.fragments.size(), kNoFragment);
  std::vector<bool> frag_used(s.fragments.size(), false);
  for (const ReusedFile& r : reused)
    if (r.source == static_cast<int>(si) && (every_file || r.node->links > 0))
      needed_ranges(s, r.x, frag_used, ranges);
  auto by_src = [](const Placed& a, const Placed& b) { return a.src < b.src; };
  std::sort(ranges.begin(), ranges.end(), by_src);
  // Bytes used, each once: what the copies (prefetched or not) hold beyond
  // them is unused.
  uint64_t used = 0, covered_to = 0;
  for (const Placed& r : ranges) {
    const uint64_t from = std::max(r.src, covered_to);
    if (r.end > from) used += r.end - from;
    covered_to = std::max(covered_to, r.end);
  }
  std::vector<Placed> todo = reserve_place(s, std::move(ranges));
  if (!async) {
    if (std::string e = copy_placed(s.fd, s.name, todo, nullptr); !e.empty()) fail(e);
  }
  s.stats.unused_bytes = s.stats.copied_bytes > used ? s.stats.copied_bytes - used : 0;
  reuse.unused_bytes += s.stats.unused_bytes;
  // Where `src` (a range of `len` bytes a placed range holds whole) landed.
  auto where = [&](uint64_t src, uint64_t len) {
    auto it = std::upper_bound(s.placed.begin(), s.placed.end(), Placed{src, 0, 0}, by_src);
    while (it != s.placed.begin()) {
      --it;
      if (it->end >= src + len) return it->dst + (src - it->src);
    }
    fail("internal error: reused bytes at " + std::to_string(src) + " of " + s.name + " were not copied");
  };
  for (size_t i = 0; i < frag_used.size(); ++i) {
    if (!frag_used[i]) continue;
    const Fragment& f = s.fragments[i];
    const uint64_t at = (f.size & kSizeMask) ? where(f.start, f.size & kSizeMask) : 0;
    check_rc(sqfs_frag_table_append(frag.get(), at, f.size, &frag_new[i]),
             "recording a reused fragment block");
  }
  for (ReusedFile& r : reused) {
    if (r.source != static_cast<int>(si) || (!every_file && r.node->links == 0)) continue;
    const FileExtent& x = r.x;
    const size_t nb = x.blocks.size();
    auto* in = static_cast<sqfs_inode_generic_t*>(std::calloc(1, sizeof(sqfs_inode_generic_t) + nb * 4));
    check_alloc(in, "creating an inode", name);
    in->payload_bytes_available = in->payload_bytes_used = static_cast<sqfs_u32>(nb * 4);
    if (nb) std::memcpy(in->extra, x.blocks.data(), nb * 4);
    const uint64_t start = stored_bytes(x) ? where(x.blocks_start, stored_bytes(x)) : 0;
    const uint32_t fi = x.fragment == kNoFragment ? kNoFragment : frag_new[x.fragment];
    const uint32_t fo = x.fragment == kNoFragment ? 0 : x.fragment_offset;
    if (start > 0xFFFFFFFFu || x.size > 0xFFFFFFFFu || x.sparse) {
      in->base.type = SQFS_INODE_EXT_FILE;
      in->data.file_ext.blocks_start = start;
      in->data.file_ext.file_size = x.size;
      in->data.file_ext.sparse = x.sparse;
      in->data.file_ext.nlink = 1;
      in->data.file_ext.fragment_idx = fi;
      in->data.file_ext.fragment_offset = fo;
      in->data.file_ext.xattr_idx = kNoXattr;
    } else {
      in->base.type = SQFS_INODE_FILE;
      in->data.file.blocks_start = static_cast<sqfs_u32>(start);
      in->data.file.file_size = static_cast<sqfs_u32>(x.size);
      in->data.file.fragment_index = fi;
      in->data.file.fragment_offset = fo;
    }
    sqfs_free(r.node->file_inode);
    r.node->file_inode = in;
    reuse.files++;
    reuse.file_bytes += x.size;
    s.stats.files++;
    s.stats.file_bytes += x.size;
  }
  if (async) start_copy(static_cast<int>(si), std::move(todo), std::move(keep));
}

}  // namespace trainimg::sqsh
