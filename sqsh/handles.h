// SPDX-License-Identifier: GPL-3.0-or-later
// RAII for libsquashfs 1.2.0: one deleter per release function
// (sqfs_destroy for objects, sqfs_free for memory the library hands out,
// sqfs_dir_tree_destroy for trees), and check() which turns a negative
// SQFS_ERROR_* into a trainimg::Error. Internal to sqsh/.
#pragma once

#include <sqfs/block.h>
#include <sqfs/block_processor.h>
#include <sqfs/block_writer.h>
#include <sqfs/compressor.h>
#include <sqfs/data_reader.h>
#include <sqfs/dir.h>
#include <sqfs/dir_reader.h>
#include <sqfs/dir_writer.h>
#include <sqfs/error.h>
#include <sqfs/frag_table.h>
#include <sqfs/id_table.h>
#include <sqfs/inode.h>
#include <sqfs/io.h>
#include <sqfs/meta_reader.h>
#include <sqfs/meta_writer.h>
#include <sqfs/super.h>
#include <sqfs/xattr.h>
#include <sqfs/xattr_reader.h>
#include <sqfs/xattr_writer.h>

#include <memory>
#include <string>
#include <string_view>

namespace trainimg::sqsh {

/// Objects (anything starting with sqfs_object_t): sqfs_destroy, NULL-safe.
struct ObjectDeleter {
  void operator()(void* p) const noexcept { sqfs_destroy(p); }
};
/// Memory returned by the library (inodes, dir entries, xattr keys/values).
struct FreeDeleter {
  void operator()(void* p) const noexcept { sqfs_free(p); }
};
struct TreeDeleter {
  void operator()(sqfs_tree_node_t* p) const noexcept { sqfs_dir_tree_destroy(p); }
};

template <class T>
using ObjectPtr = std::unique_ptr<T, ObjectDeleter>;
template <class T>
using FreePtr = std::unique_ptr<T, FreeDeleter>;

using FilePtr = ObjectPtr<sqfs_file_t>;
using CompressorPtr = ObjectPtr<sqfs_compressor_t>;
using MetaReaderPtr = ObjectPtr<sqfs_meta_reader_t>;
using MetaWriterPtr = ObjectPtr<sqfs_meta_writer_t>;
using DirReaderPtr = ObjectPtr<sqfs_dir_reader_t>;
using DirWriterPtr = ObjectPtr<sqfs_dir_writer_t>;
using DataReaderPtr = ObjectPtr<sqfs_data_reader_t>;
using IdTablePtr = ObjectPtr<sqfs_id_table_t>;
using FragTablePtr = ObjectPtr<sqfs_frag_table_t>;
using BlockWriterPtr = ObjectPtr<sqfs_block_writer_t>;
using BlockProcessorPtr = ObjectPtr<sqfs_block_processor_t>;
using XattrReaderPtr = ObjectPtr<sqfs_xattr_reader_t>;
using XattrWriterPtr = ObjectPtr<sqfs_xattr_writer_t>;

using InodePtr = FreePtr<sqfs_inode_generic_t>;
using DirEntryPtr = FreePtr<sqfs_dir_entry_t>;
using XattrEntryPtr = FreePtr<sqfs_xattr_entry_t>;
using XattrValuePtr = FreePtr<sqfs_xattr_value_t>;
using TreeNodePtr = std::unique_ptr<sqfs_tree_node_t, TreeDeleter>;

/// What an SQFS_ERROR_* code means, in words fit for a one-line error.
std::string_view error_text(int rc);

/// Throws Error(path, "ACTION: TEXT") when rc < 0; returns rc otherwise
/// (some calls return a positive count or "end of listing").
int check(int rc, std::string_view action, const std::string& path);

/// Throws Error(path, "ACTION: out of memory") when p is null.
template <class P>
P check_alloc(P p, std::string_view action, const std::string& path) {
  if (!p) check(SQFS_ERROR_ALLOC, action, path);
  return p;
}

}  // namespace trainimg::sqsh
