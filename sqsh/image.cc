// SPDX-License-Identifier: GPL-3.0-or-later
// Opening a squashfs image. Hostile images are expected (issue 4): every
// offset of the super block is checked against the file before libsquashfs
// follows it (inode.cc peeks at inode sizes, walk.cc refuses loops and bad
// names).
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "common/error.h"
#include "sqsh/compressor.h"
#include "sqsh/fd_file.h"
#include "sqsh/image_impl.h"
#include "sqsh/sqsh.h"

namespace trainimg::sqsh {

namespace {

constexpr uint64_t kNone = 0xFFFFFFFFFFFFFFFFull;
std::string hex(uint64_t v) {
  char buf[32];
  snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

}  // namespace

void Image::Impl::fail(const std::string& message) const {
  throw Error(path, message);
}

void Image::Impl::check_rc(int rc, const std::string& action) const {
  if (rc < 0) fail(rc_message(rc, action, file.get()));
}

void Image::Impl::open(int fd, bool own) {
  file = make_fd_file(fd, true, own);
  this->fd = fd;
  if (!file) {
    if (own) ::close(fd);
    throw_errno(path, "reading");
  }
  file_size = file->get_size(file.get());
  if (file_size < sizeof(sqfs_super_t)) {
    fail("not a squashfs image: " + std::to_string(file_size) +
         " bytes, too short for the 96-byte super block at offset 0");
  }
  char magic[4];
  check_rc(file->read_at(file.get(), 0, magic, 4), "reading the super block at offset 0");
  if (std::memcmp(magic, "hsqs", 4) != 0) fail("not a squashfs image: no \"hsqs\" magic at offset 0");
  int rc = sqfs_super_read(&super, file.get());
  if (rc == SQFS_ERROR_UNSUPPORTED) fail("unknown compressor id in the super block (field at offset 20)");
  if (rc == SQFS_ERROR_SUPER_BLOCK_SIZE) fail("invalid block size in the super block (field at offset 12)");
  if (rc == SFQS_ERROR_SUPER_VERSION) fail("unsupported squashfs version at offset 28 (only 4.0 is read)");
  check_rc(rc, "corrupt super block at offset 0");
  validate_super();
  open_compressor();
  open_tables();
}

void Image::Impl::validate_super() {
  const sqfs_super_t& s = super;
  auto bad = [&](const std::string& what, int field_offset) {
    fail("corrupt super block: " + what + " (field at offset " + std::to_string(field_offset) + ")");
  };
  if (s.bytes_used > file_size) {
    fail("truncated image: the super block says " + std::to_string(s.bytes_used) +
         " bytes are used (field at offset 40), the file has " + std::to_string(file_size));
  }
  if (s.bytes_used < sizeof(sqfs_super_t))
    bad("bytes_used " + std::to_string(s.bytes_used) + " is too small", 40);
  uint64_t end = s.bytes_used;
  if (s.inode_table_start < sizeof(sqfs_super_t) || s.inode_table_start >= end)
    bad("inode table start " + hex(s.inode_table_start) + " lies outside the image", 64);
  if (s.directory_table_start <= s.inode_table_start || s.directory_table_start >= end)
    bad("directory table start " + hex(s.directory_table_start) +
            " is not after the inode table and inside the image",
        72);
  if (s.id_table_start <= s.directory_table_start || s.id_table_start >= end)
    bad("id table start " + hex(s.id_table_start) + " is not after the directory table and inside the image",
        48);
  if (s.fragment_table_start != kNone &&
      (s.fragment_table_start <= s.directory_table_start || s.fragment_table_start >= s.id_table_start))
    bad("fragment table start " + hex(s.fragment_table_start) + " is not between the directory and id tables",
        80);
  if (s.export_table_start != kNone &&
      (s.export_table_start <= s.directory_table_start || s.export_table_start >= s.id_table_start))
    bad("export table start " + hex(s.export_table_start) + " is not between the directory and id tables",
        88);
  if (s.xattr_id_table_start != kNone &&
      (s.xattr_id_table_start <= s.id_table_start || s.xattr_id_table_start >= end))
    bad("xattr table start " + hex(s.xattr_id_table_start) +
            " is not after the id table and inside the image",
        56);
  if ((s.root_inode_ref >> 16) >= s.directory_table_start - s.inode_table_start ||
      (s.root_inode_ref & 0xFFFF) >= SQFS_META_BLOCK_SIZE)
    bad("root inode reference " + hex(s.root_inode_ref) + " points outside the inode table", 32);
  if (s.fragment_entry_count > 0 && s.fragment_table_start != kNone) {
    // The fragment table's index (one u64 per 8 KiB meta block of 16-byte
    // entries) must fit before the next table: bounds what libsquashfs allocates.
    uint64_t blocks =
        (uint64_t{s.fragment_entry_count} * 16 + SQFS_META_BLOCK_SIZE - 1) / SQFS_META_BLOCK_SIZE;
    uint64_t upper = s.export_table_start != kNone && s.export_table_start > s.fragment_table_start
                         ? s.export_table_start
                         : s.id_table_start;
    if (blocks * 8 > upper - s.fragment_table_start)
      bad("fragment count " + std::to_string(s.fragment_entry_count) + " does not fit the fragment table",
          16);
  }
  if (s.inode_count == 0) bad("inode count is 0", 4);
}

void Image::Impl::open_compressor() {
  sqfs_compressor_config_t cfg;
  auto id = static_cast<SQFS_COMPRESSOR>(super.compression_id);
  std::string name = std::string(to_string(static_cast<Compressor>(super.compression_id)));
  check_rc(sqfs_compressor_config_init(&cfg, id, super.block_size, SQFS_COMP_FLAG_UNCOMPRESS),
           "compressor " + name);
  int rc = create_compressor(cfg, cmp);
  if (rc == SQFS_ERROR_UNSUPPORTED) {
    fail("compressor " + name + " (id " + std::to_string(super.compression_id) +
         ", offset 20) is not supported by this build of libsquashfs");
  }
  check_rc(rc, "creating the " + name + " decompressor");
  if (super.flags & SQFS_FLAG_COMPRESSOR_OPTIONS) {
    check_rc(cmp->read_options(cmp.get(), file.get()), "reading the " + name + " options block at offset 96");
  }
  info.compressor = static_cast<Compressor>(super.compression_id);
  if (info.compressor == Compressor::Lzo) {
    sqfs_compressor_config_t now;
    cmp->get_configuration(cmp.get(), &now);
    info.lzo_algorithm = now.opt.lzo.algorithm;
    info.lzo_level = now.level;
  }
}

void Image::Impl::open_tables() {
  ids.reset(check_alloc(sqfs_id_table_create(0), "creating id table", path));
  check_rc(sqfs_id_table_read(ids.get(), file.get(), &super, cmp.get()),
           "reading the id table at offset " + std::to_string(super.id_table_start));

  uint64_t dir_limit = super.id_table_start;
  if (super.fragment_table_start != kNone) dir_limit = std::min(dir_limit, super.fragment_table_start);
  if (super.export_table_start != kNone) dir_limit = std::min(dir_limit, super.export_table_start);
  // The inode and directory tables are read block by block in walk order,
  // not file order: one read of them all saves a system call per block.
  // Capped so that memory stays bounded for huge images (they read as before).
  constexpr uint64_t kMaxPreload = 32u << 20;
  fd_file_preload(file.get(), super.inode_table_start, dir_limit, kMaxPreload);
  meta_cmp = create_meta_cache_decompressor(*cmp);
  if (!meta_cmp) fail("out of memory creating the meta data cache");
  inodes.reset(check_alloc(sqfs_meta_reader_create(file.get(), meta_cmp.get(), super.inode_table_start,
                                                   super.directory_table_start),
                           "creating inode reader", path));
  dirs.reset(
      check_alloc(sqfs_meta_reader_create(file.get(), meta_cmp.get(), super.directory_table_start, dir_limit),
                  "creating directory reader", path));

  data.reset(check_alloc(sqfs_data_reader_create(file.get(), super.block_size, cmp.get(), 0),
                         "creating data reader", path));
  check_rc(sqfs_data_reader_load_fragment_table(data.get(), &super),
           "reading the fragment table at offset " + std::to_string(super.fragment_table_start));

  if (!(super.flags & SQFS_FLAG_NO_XATTRS) && super.xattr_id_table_start != kNone) {
    // Header: u64 kv start, u32 id count, u32 unused, then one u64 per
    // meta block of 16-byte ids. Check the count fits before libsquashfs
    // allocates for it.
    unsigned char hdr[16];
    check_rc(file->read_at(file.get(), super.xattr_id_table_start, hdr, 16),
             "reading the xattr id table at offset " + std::to_string(super.xattr_id_table_start));
    uint32_t count;
    std::memcpy(&count, hdr + 8, 4);
    uint64_t blocks = (uint64_t{count} * 16 + SQFS_META_BLOCK_SIZE - 1) / SQFS_META_BLOCK_SIZE;
    if (16 + blocks * 8 > super.bytes_used - super.xattr_id_table_start) {
      fail("corrupt xattr id table at offset " + std::to_string(super.xattr_id_table_start) + ": " +
           std::to_string(count) + " ids do not fit the image");
    }
    xattrs.reset(check_alloc(sqfs_xattr_reader_create(0), "creating xattr reader", path));
    check_rc(sqfs_xattr_reader_load(xattrs.get(), &super, file.get(), cmp.get()),
             "reading the xattr tables at offset " + std::to_string(super.xattr_id_table_start));
    info.has_xattrs = count > 0;
  }

  info.block_size = super.block_size;
  info.inode_count = super.inode_count;
  info.mtime = super.modification_time;
  info.bytes_used = super.bytes_used;
  info.inode_table_start = super.inode_table_start;
  info.fragment_count = super.fragment_entry_count;
  info.id_count = super.id_count;
  info.flags = super.flags;
  info.exportable = (super.flags & SQFS_FLAG_EXPORTABLE) && super.export_table_start != kNone;
  info.data_compressed = !(super.flags & SQFS_FLAG_UNCOMPRESSED_DATA);
  info.compressor_options = super.flags & SQFS_FLAG_COMPRESSOR_OPTIONS;
}

Image::Image(const std::string& path) : impl_(std::make_unique<Impl>()) {
  impl_->path = path;
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw_errno(path, "opening");
  impl_->open(fd, true);
}

Image::Image(int fd, const std::string& name) : impl_(std::make_unique<Impl>()) {
  impl_->path = name;
  impl_->open(fd, false);
}

Image::~Image() = default;

const ImageInfo& Image::info() const {
  return impl_->info;
}
const std::string& Image::path() const {
  return impl_->path;
}
int Image::fd() const {
  return impl_->fd;
}

std::vector<Fragment> Image::fragments() {
  std::vector<Fragment> out;
  const sqfs_super_t& s = impl_->super;
  if (s.fragment_entry_count == 0) return out;
  FragTablePtr t(check_alloc(sqfs_frag_table_create(0), "creating a fragment table", impl_->path));
  impl_->check_rc(sqfs_frag_table_read(t.get(), impl_->file.get(), &impl_->super, impl_->cmp.get()),
                  "reading the fragment table at offset " + std::to_string(s.fragment_table_start));
  const size_t n = sqfs_frag_table_get_size(t.get());
  if (n != s.fragment_entry_count)
    impl_->fail("the fragment table has " + std::to_string(n) + " entries, the super block says " +
                std::to_string(s.fragment_entry_count));
  out.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    sqfs_fragment_t f{};
    impl_->check_rc(sqfs_frag_table_lookup(t.get(), static_cast<sqfs_u32>(i), &f),
                    "reading the fragment table");
    out.push_back(Fragment{f.start_offset, f.size});
  }
  return out;
}

}  // namespace trainimg::sqsh
