// SPDX-License-Identifier: GPL-3.0-or-later
// Image's internals, shared by image.cc and verify.cc. Internal to sqsh/.
#pragma once

#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "sqsh/handles.h"
#include "sqsh/sqsh.h"

namespace trainimg::sqsh {

struct Image::Impl {
  std::string path;
  // Declaration order = reverse destruction order: readers before the
  // compressor and file they borrow.
  FilePtr file;
  int fd = -1;  ///< what `file` reads
  uint64_t file_size = 0;
  sqfs_super_t super{};
  CompressorPtr cmp;
  CompressorPtr meta_cmp;  ///< cmp with a block cache: the inode and directory readers
  IdTablePtr ids;
  MetaReaderPtr inodes, dirs;
  DataReaderPtr data;
  XattrReaderPtr xattrs;
  ImageInfo info;

  struct WalkState {
    std::unordered_set<uint64_t> dirs;                // directory inode refs seen
    std::unordered_map<uint64_t, std::string> links;  // inode ref -> first path (nlink > 1)
  };

  [[noreturn]] void fail(const std::string& message) const;
  void check_rc(int rc, const std::string& action) const;
  void open(int fd, bool own);
  void validate_super();
  void open_compressor();
  void open_tables();
  InodePtr read_inode(uint64_t ref, const std::string& where);
  uint32_t lookup_id(uint16_t index, const std::string& where) const;
  void read_xattrs(const sqfs_inode_generic_t& inode, Node& n);
  Node to_node(const sqfs_inode_generic_t& in, std::string path);
  void visit(Visitor& v, WalkState& st, const sqfs_inode_generic_t& inode, uint64_t ref, Node n,
             size_t depth);
  void walk(Visitor& v);
  /// Inode and reference of `path` (no symlinks followed), or nullopt.
  std::optional<std::pair<InodePtr, uint64_t>> find(const std::string& path);
};

}  // namespace trainimg::sqsh
