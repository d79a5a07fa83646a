// SPDX-License-Identifier: GPL-3.0-or-later
// Inodes of the image being read: peeked at before libsquashfs allocates for
// them (hostile sizes), owners resolved through the id table, xattrs read.
#include <cstring>

#include "common/error.h"
#include "sqsh/image_impl.h"

namespace trainimg::sqsh {

namespace {

constexpr uint64_t kMaxBlockList = 64u << 20;  // bytes of one file's block list
constexpr uint32_t kMaxSymlink = 64u << 10;    // Linux allows 4095
constexpr uint32_t kMaxName = 256;             // squashfs names: 1..256 bytes
constexpr uint32_t kMaxXattrsPerInode = 65536;

}  // namespace

InodePtr Image::Impl::read_inode(uint64_t ref, const std::string& where) {
  uint64_t block = ref >> 16;
  size_t offset = ref & 0xFFFF;
  // Built only on failure: this runs once per entry of the walk.
  auto ctx = [&] {
    return "reading the inode of " + where + " (inode table offset " + std::to_string(block) + "+" +
           std::to_string(offset) + ")";
  };
  auto ok = [&](int rc) {
    if (rc < 0) check_rc(rc, ctx());
  };
  if (offset >= SQFS_META_BLOCK_SIZE || block >= super.directory_table_start - super.inode_table_start)
    fail(ctx() + ": reference points outside the inode table");
  // Peek at the sizes libsquashfs will allocate for, before it does.
  ok(sqfs_meta_reader_seek(inodes.get(), super.inode_table_start + block, offset));
  sqfs_inode_t base;
  ok(sqfs_meta_reader_read(inodes.get(), &base, sizeof base));
  if (base.type == SQFS_INODE_EXT_FILE) {
    sqfs_inode_file_ext_t f;
    ok(sqfs_meta_reader_read(inodes.get(), &f, sizeof f));
    if (f.file_size / super.block_size * 4 > kMaxBlockList)
      fail(ctx() + ": absurd file size " + std::to_string(f.file_size));
  } else if (base.type == SQFS_INODE_EXT_DIR) {
    // libsquashfs grows the inode by each directory index entry's name size
    // (32 bits on disk): a hostile size would make it allocate 4 GiB.
    sqfs_inode_dir_ext_t d;
    ok(sqfs_meta_reader_read(inodes.get(), &d, sizeof d));
    for (uint32_t i = 0; i < d.inodex_count; ++i) {
      sqfs_dir_index_t ent;
      ok(sqfs_meta_reader_read(inodes.get(), &ent, sizeof ent));
      if (ent.size >= kMaxName) fail(ctx() + ": absurd directory index name length " + std::to_string(ent.size + 1ull));
      char name[kMaxName];
      ok(sqfs_meta_reader_read(inodes.get(), name, ent.size + 1));
    }
  } else if (base.type == SQFS_INODE_SLINK || base.type == SQFS_INODE_EXT_SLINK) {
    sqfs_inode_slink_t l;
    ok(sqfs_meta_reader_read(inodes.get(), &l, sizeof l));
    if (l.target_size > kMaxSymlink) fail(ctx() + ": absurd symlink length " + std::to_string(l.target_size));
  }
  sqfs_inode_generic_t* raw = nullptr;
  ok(sqfs_meta_reader_read_inode(inodes.get(), &super, block, offset, &raw));
  return InodePtr(raw);
}

uint32_t Image::Impl::lookup_id(uint16_t index, const std::string& where) const {
  uint32_t id = 0;
  if (sqfs_id_table_index_to_id(ids.get(), index, &id) != 0)
    fail("corrupt inode of " + where + ": owner index " + std::to_string(index) + " is outside the id table");
  return id;
}

void Image::Impl::read_xattrs(const sqfs_inode_generic_t& inode, Node& n) {
  uint32_t idx = 0xFFFFFFFF;
  if (sqfs_inode_get_xattr_index(&inode, &idx) != 0 || idx == 0xFFFFFFFF || !xattrs) return;
  std::string ctx = "reading the xattrs of " + n.path;
  sqfs_xattr_id_t desc;
  check_rc(sqfs_xattr_reader_get_desc(xattrs.get(), idx, &desc), ctx);
  if (desc.count > kMaxXattrsPerInode) fail(ctx + ": absurd xattr count " + std::to_string(desc.count));
  check_rc(sqfs_xattr_reader_seek_kv(xattrs.get(), &desc), ctx);
  for (uint32_t i = 0; i < desc.count; ++i) {
    sqfs_xattr_entry_t* k = nullptr;
    check_rc(sqfs_xattr_reader_read_key(xattrs.get(), &k), ctx);
    XattrEntryPtr key(k);
    sqfs_xattr_value_t* v = nullptr;
    check_rc(sqfs_xattr_reader_read_value(xattrs.get(), key.get(), &v), ctx);
    XattrValuePtr value(v);
    n.xattrs[reinterpret_cast<const char*>(key->key)] =
        std::string(reinterpret_cast<const char*>(value->value), value->size);
  }
}

Node Image::Impl::to_node(const sqfs_inode_generic_t& in, std::string path) {
  Node n;
  n.path = std::move(path);
  n.mode = in.base.mode & 07777;
  n.mtime = in.base.mod_time;
  n.inode_number = in.base.inode_number;
  n.uid = lookup_id(in.base.uid_idx, n.path);
  n.gid = lookup_id(in.base.gid_idx, n.path);
  auto dev = [&](uint32_t devno) {
    // Linux new_decode_dev, as the kernel's squashfs reads it.
    n.rdev_major = (devno & 0xfff00) >> 8;
    n.rdev_minor = (devno & 0xff) | ((devno >> 12) & 0xfff00);
  };
  const auto& d = in.data;
  switch (in.base.type) {
    case SQFS_INODE_DIR: n.type = NodeType::Dir; n.nlink = d.dir.nlink; break;
    case SQFS_INODE_EXT_DIR: n.type = NodeType::Dir; n.nlink = d.dir_ext.nlink; break;
    case SQFS_INODE_FILE: n.type = NodeType::File; n.size = d.file.file_size; break;
    case SQFS_INODE_EXT_FILE:
      n.type = NodeType::File;
      n.size = d.file_ext.file_size;
      n.nlink = d.file_ext.nlink;
      break;
    case SQFS_INODE_SLINK:
    case SQFS_INODE_EXT_SLINK:
      n.type = NodeType::Symlink;
      n.nlink = d.slink.nlink;
      n.link_target.assign(reinterpret_cast<const char*>(in.extra), d.slink.target_size);
      break;
    case SQFS_INODE_BDEV: n.type = NodeType::BlockDev; n.nlink = d.dev.nlink; dev(d.dev.devno); break;
    case SQFS_INODE_EXT_BDEV: n.type = NodeType::BlockDev; n.nlink = d.dev_ext.nlink; dev(d.dev_ext.devno); break;
    case SQFS_INODE_CDEV: n.type = NodeType::CharDev; n.nlink = d.dev.nlink; dev(d.dev.devno); break;
    case SQFS_INODE_EXT_CDEV: n.type = NodeType::CharDev; n.nlink = d.dev_ext.nlink; dev(d.dev_ext.devno); break;
    case SQFS_INODE_FIFO: case SQFS_INODE_EXT_FIFO: n.type = NodeType::Fifo; n.nlink = d.ipc.nlink; break;
    case SQFS_INODE_SOCKET: case SQFS_INODE_EXT_SOCKET: n.type = NodeType::Socket; n.nlink = d.ipc.nlink; break;
    default: fail("corrupt inode of " + n.path + ": unknown type " + std::to_string(in.base.type));
  }
  read_xattrs(in, n);
  return n;
}

}  // namespace trainimg::sqsh
