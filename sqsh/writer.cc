// SPDX-License-Identifier: GPL-3.0-or-later
// The streaming squashfs writer (issue 5). libsquashfs 1.2.0 gives the
// pieces (block processor, meta/dir writers, tables); the tree, inode
// numbering, hard links and the table sequence are ours (domain.md §4).
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ctime>

#include "common/cpu_slots.h"
#include "common/cpus.h"
#include "common/error.h"
#include "sqsh/compressor.h"
#include "sqsh/fd_file.h"
#include "sqsh/writer_impl.h"

namespace trainimg::sqsh {

namespace {
constexpr size_t kMaxNameBytes = 256;      // squashfs directory entries
constexpr size_t kMaxSymlinkBytes = 4095;  // PATH_MAX - 1

// Linux new_encode_dev: what the kernel's squashfs decodes.
uint32_t encode_dev(uint32_t major, uint32_t minor) {
  return (minor & 0xff) | (major << 8) | ((minor & ~0xffu) << 12);
}

// Squashfs has no id for "none": it is written as gzip with every
// "uncompressed" flag set. The compressor the super block names.
Compressor named_compressor(Compressor c) {
  return c == Compressor::None ? Compressor::Gzip : c;
}

}  // namespace

void Writer::Impl::setup(int fd) {
  if (opt.compressor == Compressor::Lz4)
    fail("lz4 output is not offered: libsquashfs 1.2.0's lz4 id table is rejected by unsquashfs 4.5.1");
  if (opt.compressor == Compressor::Lzma)
    fail("lzma output is not offered (squashfs-tools 4.5.1 cannot read it)");
  uint32_t bs = opt.block_size;
  if (bs < SQFS_MIN_BLOCK_SIZE || bs > SQFS_MAX_BLOCK_SIZE || (bs & (bs - 1)) != 0)
    fail("block size " + std::to_string(bs) + " is not a power of two between 4 KiB and 1 MiB");
  struct stat st {};
  if (::fstat(fd, &st) != 0) throw_errno(name, "opening the output");
  if (S_ISREG(st.st_mode) && ::ftruncate(fd, 0) != 0) throw_errno(name, "truncating the output");
  file = make_fd_file(fd, false, false, /*write_behind=*/!opt.lean, opt.write_back);
  if (!file) throw_errno(name, "opening the output");
  mtime = opt.mtime ? *opt.mtime : static_cast<uint32_t>(std::time(nullptr));

  setup_compressors();
  const auto id = static_cast<SQFS_COMPRESSOR>(named_compressor(opt.compressor));
  check_rc(sqfs_super_init(&super, opt.block_size, mtime, id),
           "block size " + std::to_string(opt.block_size));
  check_rc(sqfs_super_write(&super, file.get()), "writing the super block");
  int rc = cmp->write_options(cmp.get(), file.get());
  check_rc(rc, "writing the compressor options");
  if (rc > 0) super.flags |= SQFS_FLAG_COMPRESSOR_OPTIONS;
  if (opt.compressor == Compressor::None) {
    super.flags |= SQFS_FLAG_UNCOMPRESSED_INODES | SQFS_FLAG_UNCOMPRESSED_DATA |
                   SQFS_FLAG_UNCOMPRESSED_FRAGMENTS | SQFS_FLAG_UNCOMPRESSED_IDS |
                   SQFS_FLAG_UNCOMPRESSED_XATTRS;
  }
  if (!opt.compress_data) {
    // Not SQFS_BLK_DONT_COMPRESS: libsquashfs ORs it into the fragment
    // block a file's tail lands in, and mksquashfs -noD (enroot) keeps
    // fragments compressed. The block processor's compressor stores
    // full-size (data) blocks raw instead.
    super.flags |= SQFS_FLAG_UNCOMPRESSED_DATA;
  }
  if (!opt.compress_data || opt.cpu_slots)
    data_cmp =
        check_alloc(create_data_compressor(*cmp, opt.compress_data ? 0 : opt.block_size, opt.cpu_slots),
                    "creating the compressor", name);
  // Bit 0x40: libsquashfs calls it NO_DUPLICATES and sets it by default;
  // squashfs-tools (SQUASHFS_DUPLICATE) read it as "duplicates removed",
  // which is what it means in mksquashfs's images.
  if (opt.deduplicate) {
    super.flags |= SQFS_FLAG_NO_DUPLICATES;
  } else {
    super.flags &= ~SQFS_FLAG_NO_DUPLICATES;
    file_flags |= SQFS_BLK_DONT_DEDUPLICATE;
  }

  blkwr.reset(
      check_alloc(sqfs_block_writer_create(file.get(), SQFS_DEVBLK_SIZE, 0), "creating block writer", name));
  frag.reset(check_alloc(sqfs_frag_table_create(0), "creating fragment table", name));
  sqfs_block_processor_desc_t desc;
  std::memset(&desc, 0, sizeof desc);
  desc.size = sizeof desc;
  desc.max_block_size = opt.block_size;
  desc.num_workers = opt.num_workers ? opt.num_workers : usable_cpus();
  // Memory bound of the data path: blocks in flight x block size.
  // A lean writer keeps fewer: it is one of many side by side.
  const unsigned per_worker = opt.lean ? 2 : 4, floor = opt.lean ? 4 : 8;
  desc.max_backlog = std::max(floor, desc.num_workers * per_worker);
  desc.cmp = data_cmp ? data_cmp.get() : cmp.get();
  desc.wr = blkwr.get();
  desc.tbl = frag.get();
  desc.file = file.get();  // read back fragment blocks to verify dedup matches
  desc.uncmp = uncmp.get();
  sqfs_block_processor_t* p = nullptr;
  check_rc(sqfs_block_processor_create_ex(&desc, &p), "creating the block processor");
  proc.reset(p);
  ids.reset(check_alloc(sqfs_id_table_create(0), "creating id table", name));
  if (opt.keep_xattrs) xwr.reset(check_alloc(sqfs_xattr_writer_create(0), "creating xattr writer", name));
  im.reset(check_alloc(sqfs_meta_writer_create(file.get(), cmp.get(), 0), "creating inode writer", name));
  dm.reset(check_alloc(sqfs_meta_writer_create(file.get(), cmp.get(), SQFS_META_WRITER_KEEP_IN_MEMORY),
                       "creating directory writer", name));
  dirwr.reset(
      check_alloc(sqfs_dir_writer_create(dm.get(), opt.exportable ? SQFS_DIR_WRITER_CREATE_EXPORT_TABLE : 0),
                  "creating directory writer", name));

  root = new_node(NodeType::Dir);
  root->mode = 0755;
  root->mtime = mtime;
  feeder = std::make_unique<DataFeeder>(*this, /*threaded=*/!opt.lean);
}

void Writer::Impl::setup_compressors() {
  Compressor c = opt.compressor;
  const auto id = static_cast<SQFS_COMPRESSOR>(named_compressor(c));
  sqfs_compressor_config_t cfg;
  check_rc(sqfs_compressor_config_init(&cfg, id, opt.block_size, 0), "configuring the compressor");
  if (c == Compressor::Zstd) cfg.level = 3;  // Pyxis's importer: -Xcompression-level 3
  if (opt.level) {
    int lo = 1, hi = 9;
    if (c == Compressor::Zstd) hi = SQFS_ZSTD_MAX_LEVEL;
    if (c == Compressor::Xz) lo = SQFS_XZ_MIN_LEVEL;
    if (c == Compressor::None) fail("--level makes no sense with compression none");
    if (*opt.level < lo || *opt.level > hi) {
      fail("compression level " + std::to_string(*opt.level) + " is outside " + std::to_string(lo) + ".." +
           std::to_string(hi) + " for " + std::string(to_string(c)));
    }
    cfg.level = static_cast<sqfs_u32>(*opt.level);
  }
  if (c == Compressor::None) {
    cmp = check_alloc(create_store_compressor(cfg), "creating the compressor", name);
  } else {
    check_rc(create_compressor(cfg, cmp), "creating the " + std::string(to_string(c)) + " compressor");
  }
  cfg.flags |= SQFS_COMP_FLAG_UNCOMPRESS;
  check_rc(create_compressor(cfg, uncmp), "creating the decompressor");
}

void Writer::Impl::set_meta(WNode* w, const Node& n) {
  w->mode = static_cast<uint16_t>(n.mode & 07777);
  w->uid = opt.all_root ? 0 : n.uid;
  w->gid = opt.all_root ? 0 : n.gid;
  w->mtime = opt.clamp_mtimes && n.mtime > mtime ? mtime : n.mtime;
  w->xattr_idx = kNoXattr;
  if (!xwr || n.xattrs.empty()) return;
  check_rc(sqfs_xattr_writer_begin(xwr.get(), 0), "recording xattrs of " + n.path);
  for (const auto& [k, v] : n.xattrs) {
    // squashfs stores only the user., trusted. and security. namespaces
    // (mksquashfs skips the others as well).
    if (sqfs_get_xattr_prefix_id(k.c_str()) < 0) continue;
    check_rc(sqfs_xattr_writer_add(xwr.get(), k.c_str(), v.data(), v.size()),
             "recording xattr " + k + " of " + n.path);
  }
  check_rc(sqfs_xattr_writer_end(xwr.get(), &w->xattr_idx), "recording xattrs of " + n.path);
}

WNode* Writer::Impl::parent_of(const std::string& path, std::string& leaf, bool create) {
  const size_t cut = path.rfind('/');
  const std::string_view dir(path.data(), cut == std::string::npos ? 0 : cut);
  if (last_dir && dir == last_dir_path) {
    leaf = path.substr(cut + 1);
    return last_dir;
  }
  WNode* cur = root;
  size_t pos = 1;
  for (;;) {
    size_t slash = path.find('/', pos);
    if (slash == std::string::npos) {
      leaf = path.substr(pos);
      last_dir = cur;
      last_dir_path.assign(dir);
      return cur;
    }
    const std::string_view comp(path.data() + pos, slash - pos);
    pos = slash + 1;
    auto it = cur->children().find(comp);
    if (it == cur->children().end()) {
      if (!create) return nullptr;
      WNode* d = new_node(NodeType::Dir);
      d->mode = 0755;
      d->mtime = mtime;
      cur->children().emplace(std::string(comp), d);
      cur = d;
    } else if (it->second->type != NodeType::Dir) {
      if (!create) return nullptr;
      fail(path + ": parent " + path.substr(0, slash) + " is not a directory");
    } else {
      cur = it->second;
    }
  }
}

WNode* Writer::Impl::find(const std::string& path) {
  if (path == "/") return root;
  std::string leaf;
  WNode* parent = parent_of(path, leaf, false);
  if (!parent) return nullptr;
  auto it = parent->children().find(leaf);
  return it == parent->children().end() ? nullptr : it->second;
}

void Writer::Impl::link(const std::string& path, WNode* w) {
  // A longer name is written but unreadable: unsquashfs stops ("filename too
  // long") and the kernel loses the rest of the directory.
  for (size_t b = 1; b < path.size();) {
    size_t e = std::min(path.find('/', b), path.size());
    if (e - b > kMaxNameBytes)
      fail(path + ": a name of " + std::to_string(e - b) + " bytes: squashfs names hold at most " +
           std::to_string(kMaxNameBytes) + " (Linux file names 255)");
    b = e + 1;
  }
  std::string leaf;
  WNode* parent = parent_of(path, leaf, true);
  auto [it, added] = parent->children().try_emplace(std::move(leaf), w);
  if (!added) it->second = w;  // replaces: later entries win (tar, layers)
}

void Writer::Impl::files_only(std::string_view what, std::string_view more) {
  if (opt.blocks_only)
    fail(std::string(what) + std::string(more) + ": a blocks-only writer takes regular files alone");
}

void Writer::Impl::add(const Node& n) {
  files_only(n.path);
  std::string path = normalize_image_path(n.path, name);
  if (n.type == NodeType::File || n.type == NodeType::Hardlink)
    fail(path + ": regular files go through begin_file(), hard links through add_hardlink()");
  if (n.type == NodeType::Dir) {
    WNode* existing = find(path);
    if (existing && existing->type == NodeType::Dir) {
      set_meta(existing, n);  // a directory over a directory keeps its children
      return;
    }
  } else if (path == "/") {
    fail("the root must be a directory, not a " + std::string(to_string(n.type)));
  }
  WNode* w = new_node(n.type);
  set_meta(w, n);
  if (n.type == NodeType::Symlink) {
    if (n.link_target.empty()) fail(path + ": symlink with an empty target");
    // The kernel refuses to read a longer one (PATH_MAX with its NUL).
    if (n.link_target.size() > kMaxSymlinkBytes)
      fail(path + ": a symlink target of " + std::to_string(n.link_target.size()) +
           " bytes: the kernel reads at most " + std::to_string(kMaxSymlinkBytes));
    w->target = std::make_unique<std::string>(n.link_target);
  }
  if (n.type == NodeType::CharDev || n.type == NodeType::BlockDev)
    w->devno = encode_dev(n.rdev_major, n.rdev_minor);
  link(path, w);
}

void Writer::Impl::begin_file(const Node& n) {
  if (opt.blocks_only) {  // kept by tag for finish_blocks_only()
    BlockFile& f = block_files.emplace_back();
    f.tag = n.tag;
    feeder->begin(&f.file_inode, n.path);
    in_file = true;
    stats.files++;
    return;
  }
  std::string path = normalize_image_path(n.path, name);
  if (path == "/") fail("the root must be a directory, not a file");
  WNode* w = new_node(NodeType::File);
  set_meta(w, n);
  w->tag = n.tag;
  link(path, w);
  feeder->begin(&w->file_inode, path);
  in_file = true;
  stats.files++;
}

void Writer::Impl::add_hardlink(const std::string& p, const std::string& t) {
  files_only("hard link ", p);
  std::string path = normalize_image_path(p, name);
  std::string target = normalize_image_path(t, name);
  if (path == "/") fail("hard link / -> " + target + ": the root must be a directory");
  WNode* w = find(target);
  if (!w) fail("hard link " + path + " -> " + target + ": the target does not exist (yet)");
  if (w->type == NodeType::Dir) fail("hard link " + path + " -> " + target + ": the target is a directory");
  if (path == target) return;
  link(path, w);
}

void Writer::Impl::remove(const std::string& p) {
  files_only("removing ", p);
  std::string path = normalize_image_path(p, name);
  if (path == "/") {
    root->children().clear();
    last_dir = nullptr;  // the one way a directory leaves the tree unlooked-up
    return;
  }
  std::string leaf;
  WNode* parent = parent_of(path, leaf, false);
  if (parent) parent->children().erase(leaf);
}

Writer::Writer(int fd, std::string name, WriterOptions opts) : impl_(std::make_unique<Impl>()) {
  impl_->name = std::move(name);
  impl_->opt = opts;
  impl_->setup(fd);
}

// A writer dropped unfinished (the walk failed, e.g. a registry blob that did
// not verify while it was being read) may still have data blocks in flight in
// libsquashfs's worker threads, which destroying the processor does not free
// (libsquashfs 1.2, found by LeakSanitizer): let them drain first. The image
// is being thrown away, so errors here are moot.
Writer::~Writer() {
  if (!impl_ || !impl_->proc || impl_->finished) return;
  CpuSlotFreed freed;  // the workers draining may need this thread's CPU slot
  impl_->feeder->abandon();
  if (impl_->feeder->file_open()) (void)sqfs_block_processor_end_file(impl_->proc.get());
  (void)sqfs_block_processor_sync(impl_->proc.get());
}

void Writer::add(const Node& n) {
  impl_->guarded([&] {
    if (impl_->in_file) impl_->fail(n.path + ": added while a file is open");
    impl_->add(n);
  });
}

void Writer::begin_file(const Node& n) {
  impl_->guarded([&] {
    if (impl_->in_file) impl_->fail(n.path + ": begin_file() while a file is open");
    impl_->begin_file(n);
  });
}

void Writer::write(const void* data, size_t n) {
  impl_->guarded([&] {
    if (!impl_->in_file) impl_->fail("write() outside a file");
    impl_->feeder->write(data, n);
  });
}

void Writer::end_file() {
  impl_->guarded([&] {
    if (!impl_->in_file) impl_->fail("end_file() outside a file");
    impl_->in_file = false;
    impl_->feeder->end();
  });
}

void Writer::add_hardlink(const std::string& path, const std::string& target) {
  impl_->guarded([&] {
    if (impl_->in_file) impl_->fail(path + ": added while a file is open");
    impl_->add_hardlink(path, target);
  });
}

void Writer::remove(const std::string& path) {
  impl_->guarded([&] {
    if (impl_->in_file) impl_->fail(path + ": removed while a file is open");
    impl_->remove(path);
  });
}

int Writer::add_reuse_source(int fd, const std::string& source_name, const ImageInfo& info,
                             std::vector<Fragment> fragments) {
  return impl_->guarded([&] { return impl_->add_reuse_source(fd, source_name, info, std::move(fragments)); });
}

void Writer::add_reused_file(const Node& n, int source, FileExtent x) {
  impl_->guarded([&] {
    if (impl_->in_file) impl_->fail(n.path + ": added while a file is open");
    impl_->add_reused_file(n, source, std::move(x));
  });
}

void Writer::copy_reused_now(int source) {
  impl_->guarded([&] { impl_->copy_reused_now(source); });
}

void Writer::copy_reused_soon(int source, std::shared_ptr<void> keep) {
  impl_->guarded([&] { impl_->copy_reused_soon(source, std::move(keep)); });
}

void Writer::prefetch_reused(int source, const std::vector<const FileExtent*>& files) {
  impl_->guarded([&] { impl_->prefetch_reused(source, files); });
}

ReuseStats Writer::reuse_stats(int source) const {
  if (source < 0) return impl_->reuse;
  const auto& all = impl_->reuse_sources;
  return static_cast<size_t>(source) < all.size() ? all[static_cast<size_t>(source)].stats : ReuseStats{};
}

std::vector<Fragment> Writer::fragments() const {
  std::vector<Fragment> out;
  if (!impl_->finished || !impl_->frag) return out;
  const size_t n = sqfs_frag_table_get_size(impl_->frag.get());
  out.reserve(n);
  for (size_t i = 0; i < n; ++i) out.push_back(*fragment(static_cast<uint32_t>(i)));
  return out;
}

ImageInfo Writer::Impl::data_info() const {
  ImageInfo info;
  info.compressor = named_compressor(opt.compressor);
  info.block_size = opt.block_size;
  info.data_compressed = opt.compress_data && opt.compressor != Compressor::None;
  info.bytes_used = info.inode_table_start = stats.image_bytes;
  info.fragment_count = static_cast<uint32_t>(frag ? sqfs_frag_table_get_size(frag.get()) : 0);
  return info;
}

ImageInfo Writer::data_info() const {
  return impl_->data_info();
}

std::optional<Fragment> Writer::fragment(uint32_t index) const {
  if (!impl_->finished || !impl_->frag) return std::nullopt;
  sqfs_fragment_t f{};
  if (sqfs_frag_table_lookup(impl_->frag.get(), index, &f) != 0) return std::nullopt;
  return Fragment{f.start_offset, f.size};
}

uint64_t Writer::finish() {
  return impl_->guarded([&] { return impl_->finish(); });
}

Writer::Stats Writer::stats() const {
  return impl_->stats;
}

}  // namespace trainimg::sqsh
