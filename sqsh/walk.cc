// SPDX-License-Identifier: GPL-3.0-or-later
// The walk over an opened image (depth first, sorted), path lookup and
// file contents through sqfs_data_reader.
#include <algorithm>
#include <cstring>
#include <vector>

#include "common/error.h"
#include "sqsh/image_impl.h"

namespace trainimg::sqsh {

namespace {

constexpr size_t kMaxDepth = 2048;              // PATH_MAX / 2: deeper is hostile
constexpr size_t kMaxEntriesPerDir = 1u << 21;  // bounds one listing's memory

std::string child_path(const std::string& dir, const std::string& name) {
  return dir == "/" ? "/" + name : dir + "/" + name;
}

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
  if (depth >= kMaxDepth)
    fail("corrupt directory tree: deeper than " + std::to_string(kMaxDepth) + " at " + n.path);

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
    if (name == "." || name == ".." || name.find('/') != std::string::npos ||
        name.find('\0') != std::string::npos)
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

void Image::walk(Visitor& v) {
  impl_->walk(v);
}

std::vector<Node> Image::list(const std::string& path) {
  std::vector<Node> out;
  auto found = impl_->find(path);
  if (!found) return out;
  const sqfs_inode_generic_t& dir = *found->first;
  if (dir.base.type != SQFS_INODE_DIR && dir.base.type != SQFS_INODE_EXT_DIR) return out;
  const std::string dir_path = normalize_image_path(path, impl_->path);
  struct Child {
    uint64_t ref;
    std::string path;
  };
  std::vector<Child> children;
  sqfs_readdir_state_t rd;
  impl_->check_rc(sqfs_readdir_state_init(&rd, &impl_->super, &dir), "reading directory " + dir_path);
  std::string prev;
  for (;;) {
    sqfs_dir_entry_t* raw = nullptr;
    sqfs_u64 iref = 0;
    int rc = sqfs_meta_reader_readdir(impl_->dirs.get(), &rd, &raw, nullptr, &iref);
    if (rc < 0) impl_->check_rc(rc, "reading directory " + dir_path);
    if (rc > 0) break;
    DirEntryPtr ent(raw);
    std::string name(reinterpret_cast<const char*>(ent->name), size_t{ent->size} + 1);
    if (name == "." || name == ".." || name.find('/') != std::string::npos ||
        name.find('\0') != std::string::npos)
      impl_->fail("corrupt directory " + dir_path + ": invalid entry name \"" + name + "\"");
    if (!prev.empty() && !(prev < name))
      impl_->fail("corrupt directory " + dir_path + ": entries not sorted or duplicated at \"" + name + "\"");
    if (children.size() >= kMaxEntriesPerDir)
      impl_->fail("corrupt directory " + dir_path + ": more than " + std::to_string(kMaxEntriesPerDir) +
                  " entries");
    children.push_back({iref, child_path(dir_path, name)});
    prev = std::move(name);
  }
  out.reserve(children.size());
  for (Child& c : children) {
    InodePtr inode = impl_->read_inode(c.ref, c.path);
    out.push_back(impl_->to_node(*inode, std::move(c.path)));
  }
  return out;
}

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

}  // namespace trainimg::sqsh
