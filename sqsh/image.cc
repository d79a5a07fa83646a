// SPDX-License-Identifier: GPL-3.0-or-later
// The squashfs reader. Hostile images are expected (issue 4): every offset
// of the super block is checked against the file before libsquashfs follows
// it, inode sizes are peeked before libsquashfs allocates for them, and the
// walk refuses directory loops, bad names and unsorted listings.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <unordered_map>
#include <unordered_set>

#include "common/error.h"
#include "sqsh/compressor.h"
#include "sqsh/fd_file.h"
#include "sqsh/image_impl.h"
#include "sqsh/sqsh.h"

namespace trainimg::sqsh {

namespace {

constexpr uint64_t kNone = 0xFFFFFFFFFFFFFFFFull;
constexpr size_t kMaxDepth = 2048;              // PATH_MAX / 2: deeper is hostile
constexpr uint64_t kMaxBlockList = 64u << 20;   // bytes of one file's block list
constexpr uint32_t kMaxSymlink = 64u << 10;     // Linux allows 4095
constexpr uint32_t kMaxXattrsPerInode = 65536;
constexpr size_t kMaxEntriesPerDir = 1u << 21;  // bounds one listing's memory

std::string hex(uint64_t v) {
  char buf[32];
  snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

std::string child_path(const std::string& dir, const std::string& name) {
  return dir == "/" ? "/" + name : dir + "/" + name;
}

}  // namespace

void Image::Impl::fail(const std::string& message) const { throw Error(path, message); }

void Image::Impl::check_rc(int rc, const std::string& action) const {
  if (rc >= 0) return;
  std::string msg = action + ": " + std::string(error_text(rc));
  if (rc == SQFS_ERROR_IO && file) {
    int e = fd_file_errno(file.get());
    if (e != 0) msg += std::string(" (") + std::strerror(e) + ")";
  }
  fail(msg);
}

void Image::Impl::open(int fd, bool own) {
  file = make_fd_file(fd, true, own);
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
  if (s.bytes_used < sizeof(sqfs_super_t)) bad("bytes_used " + std::to_string(s.bytes_used) + " is too small", 40);
  uint64_t end = s.bytes_used;
  if (s.inode_table_start < sizeof(sqfs_super_t) || s.inode_table_start >= end)
    bad("inode table start " + hex(s.inode_table_start) + " lies outside the image", 64);
  if (s.directory_table_start <= s.inode_table_start || s.directory_table_start >= end)
    bad("directory table start " + hex(s.directory_table_start) + " is not after the inode table and inside the image", 72);
  if (s.id_table_start <= s.directory_table_start || s.id_table_start >= end)
    bad("id table start " + hex(s.id_table_start) + " is not after the directory table and inside the image", 48);
  if (s.fragment_table_start != kNone &&
      (s.fragment_table_start <= s.directory_table_start || s.fragment_table_start >= s.id_table_start))
    bad("fragment table start " + hex(s.fragment_table_start) + " is not between the directory and id tables", 80);
  if (s.export_table_start != kNone &&
      (s.export_table_start <= s.directory_table_start || s.export_table_start >= s.id_table_start))
    bad("export table start " + hex(s.export_table_start) + " is not between the directory and id tables", 88);
  if (s.xattr_id_table_start != kNone && (s.xattr_id_table_start <= s.id_table_start || s.xattr_id_table_start >= end))
    bad("xattr table start " + hex(s.xattr_id_table_start) + " is not after the id table and inside the image", 56);
  if ((s.root_inode_ref >> 16) >= s.directory_table_start - s.inode_table_start ||
      (s.root_inode_ref & 0xFFFF) >= SQFS_META_BLOCK_SIZE)
    bad("root inode reference " + hex(s.root_inode_ref) + " points outside the inode table", 32);
  if (s.fragment_entry_count > 0 && s.fragment_table_start != kNone) {
    // The fragment table's index (one u64 per 8 KiB meta block of 16-byte
    // entries) must fit before the next table: bounds what libsquashfs allocates.
    uint64_t blocks = (uint64_t{s.fragment_entry_count} * 16 + SQFS_META_BLOCK_SIZE - 1) / SQFS_META_BLOCK_SIZE;
    uint64_t upper = s.export_table_start != kNone && s.export_table_start > s.fragment_table_start
                         ? s.export_table_start
                         : s.id_table_start;
    if (blocks * 8 > upper - s.fragment_table_start)
      bad("fragment count " + std::to_string(s.fragment_entry_count) + " does not fit the fragment table", 16);
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
  inodes.reset(check_alloc(
      sqfs_meta_reader_create(file.get(), cmp.get(), super.inode_table_start, super.directory_table_start),
      "creating inode reader", path));
  dirs.reset(check_alloc(sqfs_meta_reader_create(file.get(), cmp.get(), super.directory_table_start, dir_limit),
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
  info.fragment_count = super.fragment_entry_count;
  info.id_count = super.id_count;
  info.flags = super.flags;
  info.exportable = (super.flags & SQFS_FLAG_EXPORTABLE) && super.export_table_start != kNone;
  info.data_compressed = !(super.flags & SQFS_FLAG_UNCOMPRESSED_DATA);
  info.compressor_options = super.flags & SQFS_FLAG_COMPRESSOR_OPTIONS;
}

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

namespace {

class DataFileReader : public FileReader {
 public:
  DataFileReader(Image::Impl& img, const sqfs_inode_generic_t& inode, const Node& n)
      : img_(img), inode_(inode), node_(n) {}
  size_t read(char* buf, size_t n) override {
    uint64_t left = node_.size - off_;
    if (n > left) n = static_cast<size_t>(left);
    if (n > (1u << 30)) n = 1u << 30;
    if (n == 0) return 0;
    sqfs_s32 rc = sqfs_data_reader_read(img_.data.get(), &inode_, off_, buf, static_cast<sqfs_u32>(n));
    img_.check_rc(rc, "reading the data of " + node_.path + " at offset " + std::to_string(off_));
    if (rc == 0) img_.fail("reading the data of " + node_.path + ": data ends at " + std::to_string(off_));
    off_ += static_cast<uint64_t>(rc);
    return static_cast<size_t>(rc);
  }
  uint64_t skip(uint64_t n) override {
    uint64_t left = node_.size - off_;
    if (n > left) n = left;
    off_ += n;  // random access: nothing is decompressed for skipped bytes
    return n;
  }
  uint64_t size() const override { return node_.size; }

 private:
  Image::Impl& img_;
  const sqfs_inode_generic_t& inode_;
  const Node& node_;
  uint64_t off_ = 0;
};

}  // namespace

void Image::Impl::visit(Visitor& v, WalkState& st, const sqfs_inode_generic_t& inode, uint64_t ref, Node n,
                        size_t depth) {
  if (n.type != NodeType::Dir && n.nlink > 1) {
    auto [it, inserted] = st.links.try_emplace(ref, n.path);
    if (!inserted) {
      n.type = NodeType::Hardlink;
      n.link_target = it->second;
      n.size = 0;
    }
  }
  bool want = v.entry(n);
  if (n.type == NodeType::File && want) {
    // The listing pass dropped file inodes (block lists): read it again.
    InodePtr file = read_inode(ref, n.path);
    DataFileReader r(*this, *file, n);
    v.content(n, r);
  }
  if (n.type != NodeType::Dir) return;
  if (!st.dirs.insert(ref).second)
    fail("corrupt directory tree: " + n.path + " is a directory reached twice (loop or directory hard link)");
  if (depth >= kMaxDepth) fail("corrupt directory tree: deeper than " + std::to_string(kMaxDepth) + " at " + n.path);

  // Two passes per directory: the whole listing, then the inodes of all its
  // entries (contiguous in the inode table), and only then the subtrees.
  // Interleaving them made both meta data readers re-decompress the
  // parent's blocks after every subdirectory (2.7x slower than unsquashfs).
  struct Child {
    uint64_t ref;
    Node node;
    InodePtr dir;  // directories only: needed to list them
  };
  std::vector<Child> children;
  sqfs_readdir_state_t rd;
  check_rc(sqfs_readdir_state_init(&rd, &super, &inode), "reading directory " + n.path);
  std::string prev;
  for (;;) {
    sqfs_dir_entry_t* raw = nullptr;
    sqfs_u64 iref = 0;
    int rc = sqfs_meta_reader_readdir(dirs.get(), &rd, &raw, nullptr, &iref);
    if (rc < 0) check_rc(rc, "reading directory " + n.path);
    if (rc > 0) break;
    DirEntryPtr ent(raw);
    std::string name(reinterpret_cast<const char*>(ent->name), size_t{ent->size} + 1);
    if (name == "." || name == ".." || name.find('/') != std::string::npos || name.find('\0') != std::string::npos)
      fail("corrupt directory " + n.path + ": invalid entry name \"" + name + "\"");
    if (!prev.empty() && !(prev < name))
      fail("corrupt directory " + n.path + ": entries not sorted or duplicated at \"" + name + "\"");
    if (children.size() >= kMaxEntriesPerDir)
      fail("corrupt directory " + n.path + ": more than " + std::to_string(kMaxEntriesPerDir) + " entries");
    Child c;
    c.ref = iref;
    c.node.path = child_path(n.path, name);
    children.push_back(std::move(c));
    prev = std::move(name);
  }
  for (Child& c : children) {
    InodePtr child = read_inode(c.ref, c.node.path);
    c.node = to_node(*child, std::move(c.node.path));
    if (c.node.type == NodeType::Dir) c.dir = std::move(child);
  }
  for (Child& c : children) {
    const sqfs_inode_generic_t* ci = c.dir ? c.dir.get() : &inode;  // only dirs use it
    visit(v, st, *ci, c.ref, std::move(c.node), depth + 1);
    c.dir.reset();
  }
}

void Image::Impl::walk(Visitor& v) {
  WalkState st;
  st.dirs.reserve(std::min<size_t>(super.inode_count / 4 + 16, 1u << 20));
  InodePtr root = read_inode(super.root_inode_ref, "/");
  Node n = to_node(*root, "/");
  if (n.type != NodeType::Dir) fail("corrupt image: the root inode is not a directory");
  visit(v, st, *root, super.root_inode_ref, std::move(n), 0);
}

std::optional<std::pair<InodePtr, uint64_t>> Image::Impl::find(const std::string& p) {
  std::string path = normalize_image_path(p, this->path);
  InodePtr cur = read_inode(super.root_inode_ref, "/");
  uint64_t ref = super.root_inode_ref;
  std::string sofar = "/";
  size_t pos = 1;
  size_t steps = 0;
  while (pos < path.size()) {
    size_t slash = path.find('/', pos);
    std::string name = path.substr(pos, slash == std::string::npos ? std::string::npos : slash - pos);
    pos = slash == std::string::npos ? path.size() : slash + 1;
    if (cur->base.type != SQFS_INODE_DIR && cur->base.type != SQFS_INODE_EXT_DIR) return std::nullopt;
    if (++steps > kMaxDepth) fail("path too deep: " + path);
    sqfs_readdir_state_t rd;
    check_rc(sqfs_readdir_state_init(&rd, &super, cur.get()), "reading directory " + sofar);
    bool found = false;
    for (;;) {
      sqfs_dir_entry_t* raw = nullptr;
      sqfs_u64 iref = 0;
      int rc = sqfs_meta_reader_readdir(dirs.get(), &rd, &raw, nullptr, &iref);
      check_rc(rc, "reading directory " + sofar);
      if (rc > 0) break;
      DirEntryPtr ent(raw);
      if (name.size() == size_t{ent->size} + 1 && std::memcmp(ent->name, name.data(), name.size()) == 0) {
        sofar = child_path(sofar, name);
        cur = read_inode(iref, sofar);
        ref = iref;
        found = true;
        break;
      }
    }
    if (!found) return std::nullopt;
  }
  return std::make_pair(std::move(cur), ref);
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

const ImageInfo& Image::info() const { return impl_->info; }
const std::string& Image::path() const { return impl_->path; }
void Image::walk(Visitor& v) { impl_->walk(v); }

std::optional<Node> Image::stat(const std::string& path) {
  auto found = impl_->find(path);
  if (!found) return std::nullopt;
  return impl_->to_node(*found->first, normalize_image_path(path, impl_->path));
}

std::optional<std::string> Image::read_file(const std::string& path, size_t max_bytes) {
  auto found = impl_->find(path);
  if (!found) return std::nullopt;
  Node n = impl_->to_node(*found->first, normalize_image_path(path, impl_->path));
  if (n.type != NodeType::File) return std::nullopt;
  DataFileReader r(*impl_, *found->first, n);
  std::string out(static_cast<size_t>(std::min<uint64_t>(n.size, max_bytes)), '\0');
  size_t got = 0;
  while (got < out.size()) {
    size_t k = r.read(out.data() + got, out.size() - got);
    if (k == 0) break;
    got += k;
  }
  out.resize(got);
  return out;
}

std::string normalize_image_path(std::string_view p, const std::string& context) {
  if (p.find('\0') != std::string_view::npos) throw Error(context, "path contains a NUL byte");
  std::string out;
  size_t pos = 0;
  while (pos <= p.size()) {
    size_t slash = p.find('/', pos);
    if (slash == std::string_view::npos) slash = p.size();
    std::string_view comp = p.substr(pos, slash - pos);
    pos = slash + 1;
    if (comp.empty() || comp == ".") continue;
    if (comp == "..") throw Error(context, "path \"" + std::string(p) + "\" has a \"..\" component");
    out += '/';
    out += comp;
  }
  return out.empty() ? "/" : out;
}

std::string_view to_string(Compressor c) {
  switch (c) {
    case Compressor::None: return "none";
    case Compressor::Gzip: return "gzip";
    case Compressor::Lzma: return "lzma";
    case Compressor::Lzo: return "lzo";
    case Compressor::Xz: return "xz";
    case Compressor::Lz4: return "lz4";
    case Compressor::Zstd: return "zstd";
  }
  return "unknown";
}

std::optional<Compressor> parse_compressor(std::string_view name) {
  for (auto c : {Compressor::None, Compressor::Gzip, Compressor::Lzma, Compressor::Lzo, Compressor::Xz,
                 Compressor::Lz4, Compressor::Zstd})
    if (to_string(c) == name) return c;
  return std::nullopt;
}

std::string_view to_string(NodeType t) {
  switch (t) {
    case NodeType::File: return "file";
    case NodeType::Dir: return "dir";
    case NodeType::Symlink: return "symlink";
    case NodeType::Hardlink: return "hardlink";
    case NodeType::Fifo: return "fifo";
    case NodeType::CharDev: return "chardev";
    case NodeType::BlockDev: return "blockdev";
    case NodeType::Socket: return "socket";
  }
  return "unknown";
}

}  // namespace trainimg::sqsh
