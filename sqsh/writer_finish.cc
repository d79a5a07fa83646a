// SPDX-License-Identifier: GPL-3.0-or-later
// Writer::finish(): the tree and tables after the data.
//
// Image layout, as mksquashfs and tar2sqfs write it:
//   super block | compressor options | data + fragment blocks |
//   inode table | directory table | fragment table | export table |
//   id table | xattr tables | padding to 4 KiB
// Inodes are numbered so that every inode is written before the directory
// listing that refers to it: a directory's subtrees first, then its
// entries, the root last (tar2sqfs's order).
#include <cstdlib>
#include <cstring>
#include <unordered_map>
#include <vector>

#include "common/cpu_slots.h"
#include "sqsh/writer_impl.h"

namespace trainimg::sqsh {

namespace {

struct CFree {
  void operator()(void* p) const noexcept { std::free(p); }
};

// Sets the inode's xattr index, keeping its type. sqfs_inode_set_xattr_index
// turns an extended inode with no xattr back into a basic one, which would
// drop a directory's index and undo the extended file inodes asked for in
// write_inode; an inode that has an xattr is extended either way.
int set_xattr_index(sqfs_inode_generic_t* inode, uint32_t idx) {
  if (idx == kNoXattr && inode->base.type == SQFS_INODE_EXT_DIR) {
    inode->data.dir_ext.xattr_idx = kNoXattr;
    return 0;
  }
  if (idx == kNoXattr && inode->base.type == SQFS_INODE_EXT_FILE) {
    inode->data.file_ext.xattr_idx = kNoXattr;
    return 0;
  }
  return sqfs_inode_set_xattr_index(inode, idx);
}

// Where a file inode's bytes were written.
FileExtent extent_of(const sqfs_inode_generic_t* inode) {
  FileExtent x;
  sqfs_u64 start = 0, size = 0;
  sqfs_inode_get_file_block_start(inode, &start);
  sqfs_inode_get_file_size(inode, &size);
  x.blocks_start = start;
  x.size = size;
  x.blocks.assign(inode->extra, inode->extra + sqfs_inode_get_file_block_count(inode));
  sqfs_inode_get_frag_location(inode, &x.fragment, &x.fragment_offset);
  x.sparse = inode->base.type == SQFS_INODE_EXT_FILE ? inode->data.file_ext.sparse : 0;
  return x;
}

}  // namespace

void Writer::Impl::number(WNode* dir, std::vector<WNode*>& order) {
  for (auto& [name_, c] : dir->children()) {
    if (c->type == NodeType::Dir) number(c, order);
  }
  for (auto& [name_, c] : dir->children()) {
    if (c->inode_num == 0) {
      order.push_back(c);
      c->inode_num = static_cast<uint32_t>(order.size());
    }
  }
}

void Writer::Impl::write_inode(WNode* w, uint32_t parent_num, bool wide_files) {
  InodePtr owned;
  std::unique_ptr<sqfs_inode_generic_t, CFree> made;
  sqfs_inode_generic_t* inode = nullptr;
  switch (w->type) {
    case NodeType::Dir: {
      check_rc(sqfs_dir_writer_begin(dirwr.get(), 0), "writing a directory");
      for (auto& [n, c] : w->children()) {
        check_rc(sqfs_dir_writer_add_entry(dirwr.get(), n.c_str(), c->inode_num, c->inode_ref,
                                           static_cast<sqfs_u16>(type_bits(c->type) | c->mode)),
                 "writing directory entry " + n);
      }
      check_rc(sqfs_dir_writer_end(dirwr.get()), "writing a directory");
      // A listing that crosses a meta data block boundary gets an extended
      // inode with a directory index, as mksquashfs writes it: the kernel
      // and squashfuse then seek to the right header of a big directory
      // (site-packages, /usr/lib/x86_64-linux-gnu) instead of scanning the
      // whole listing. libsquashfs 1.2.0 only fills the index into an
      // extended inode, and only makes one for an xattr or a large listing,
      // so ask for it with a placeholder xattr index; the real one (or
      // none) is set below.
      bool crosses =
          (sqfs_dir_writer_get_dir_reference(dirwr.get()) & 0xFFFF) + sqfs_dir_writer_get_size(dirwr.get()) >
          SQFS_META_BLOCK_SIZE;
      uint32_t want_ext = crosses && w->xattr_idx == kNoXattr ? 0 : w->xattr_idx;
      owned.reset(check_alloc(sqfs_dir_writer_create_inode(dirwr.get(), 0, want_ext, parent_num),
                              "creating a directory inode", name));
      inode = owned.get();
      if (inode->base.type == SQFS_INODE_DIR) {
        inode->data.dir.nlink = w->links;
      } else {
        inode->data.dir_ext.nlink = w->links;
      }
      break;
    }
    case NodeType::File:
      owned.reset(w->file_inode);
      w->file_inode = nullptr;
      inode = check_alloc(owned.get(), "a file without its inode", name);
      if (opt.on_extent && w->tag != Node::kNoTag) opt.on_extent(w->tag, extent_of(inode));
      if (inode->base.type == SQFS_INODE_EXT_FILE || w->links > 1 || wide_files) {
        sqfs_inode_make_extended(inode);
        inode->data.file_ext.nlink = w->links;
      }
      break;
    default: {
      size_t extra = w->type == NodeType::Symlink && w->target ? w->target->size() : 0;
      made.reset(
          static_cast<sqfs_inode_generic_t*>(std::calloc(1, sizeof(sqfs_inode_generic_t) + extra + 1)));
      inode = check_alloc(made.get(), "creating an inode", name);
      switch (w->type) {
        case NodeType::Symlink:
          inode->base.type = SQFS_INODE_SLINK;
          inode->data.slink.nlink = w->links;
          inode->data.slink.target_size = static_cast<sqfs_u32>(extra);
          inode->payload_bytes_available = static_cast<sqfs_u32>(extra + 1);
          inode->payload_bytes_used = static_cast<sqfs_u32>(extra);
          std::memcpy(inode->extra, w->target->data(), extra);
          break;
        case NodeType::CharDev:
        case NodeType::BlockDev:
          inode->base.type = w->type == NodeType::CharDev ? SQFS_INODE_CDEV : SQFS_INODE_BDEV;
          inode->data.dev.nlink = w->links;
          inode->data.dev.devno = w->devno;
          break;
        default:
          inode->base.type = w->type == NodeType::Fifo ? SQFS_INODE_FIFO : SQFS_INODE_SOCKET;
          inode->data.ipc.nlink = w->links;
          break;
      }
    }
  }
  inode->base.mode = static_cast<sqfs_u16>(type_bits(w->type) | w->mode);
  inode->base.mod_time = w->mtime;
  inode->base.inode_number = w->inode_num;
  check_rc(set_xattr_index(inode, w->xattr_idx), "setting an xattr index");
  check_rc(sqfs_id_table_id_to_index(ids.get(), w->uid, &inode->base.uid_idx), "recording uid");
  check_rc(sqfs_id_table_id_to_index(ids.get(), w->gid, &inode->base.gid_idx), "recording gid");
  sqfs_u64 block = 0;
  sqfs_u32 offset = 0;
  sqfs_meta_writer_get_position(im.get(), &block, &offset);
  w->inode_ref = (block << 16) | offset;
  check_rc(sqfs_meta_writer_write_inode(im.get(), inode), "writing an inode");
}

uint64_t Writer::Impl::finish_blocks_only() {
  for (BlockFile& f : block_files) {
    InodePtr inode(f.file_inode);
    f.file_inode = nullptr;
    check_alloc(inode.get(), "a file without its inode", name);
    if (opt.on_extent && f.tag != Node::kNoTag) opt.on_extent(f.tag, extent_of(inode.get()));
  }
  check_rc(fd_file_flush(file.get()), "writing the data");
  stats.image_bytes = file->get_size(file.get());
  finished = true;
  return stats.image_bytes;
}

void Writer::Impl::pad_to(uint64_t multiple) {
  uint64_t size = file->get_size(file.get());
  if (size % multiple == 0) return;
  std::vector<char> zeros(multiple - size % multiple, 0);
  check_rc(file->write_at(file.get(), size, zeros.data(), zeros.size()), "padding the image");
}

uint64_t Writer::Impl::finish() {
  if (in_file) fail("finish() called inside a file");
  {
    CpuSlotFreed freed;  // waits for the compressors, which need CPU slots (common/cpu_slots.h)
    feeder->drain();
    feeder->abandon();  // nothing is left: the thread just ends
    check_rc(sqfs_block_processor_finish(proc.get()), "writing the remaining data blocks");
  }

  // Link counts: every directory entry is one link; a directory has two
  // more (its "." and its parent's entry is counted above) per squashfs.
  std::vector<WNode*> stack{root};
  while (!stack.empty()) {
    WNode* d = stack.back();
    stack.pop_back();
    d->links = 2;
    for (auto& [n, c] : d->children()) {
      if (c->type == NodeType::Dir) {
        d->links++;
        stack.push_back(c);
      } else {
        c->links++;
      }
    }
  }

  join_copies();
  copy_reused();
  // What the block processor read, and the reused files' bytes (copied
  // here or earlier by copy_reused_now).
  stats.input_bytes = sqfs_block_processor_get_stats(proc.get())->input_bytes_read + reuse.file_bytes;
  if (opt.blocks_only) return finish_blocks_only();
  // A file whose blocks start past 4 GiB needs an extended inode, so in a
  // large image which files get one would depend on where their blocks
  // landed, and with it the size of the inode table, the grouping of the
  // directory table and which directories cross a meta data block (their
  // inode type, above). Give every regular file of an image holding 3 GiB or
  // more of file data an extended inode (24 more bytes, before compression):
  // the tables then depend on the tree alone, and an import that reuses
  // blocks (placed elsewhere) stays sqfsdiff-equal to a cold one. Below
  // 3 GiB no block can start past 4 GiB unless a reused image brings over
  // 1 GiB of padding and stale fragment tails.
  const bool wide_files = stats.input_bytes >= (uint64_t{3} << 30);

  std::vector<WNode*> order;
  number(root, order);
  order.push_back(root);
  root->inode_num = static_cast<uint32_t>(order.size());
  if (order.size() > 0xFFFFFFFEu) fail("too many inodes");

  // Parent inode numbers, which only directory inodes hold.
  std::unordered_map<const WNode*, uint32_t> parent;
  for (WNode* d : order) {
    if (d->type != NodeType::Dir) continue;
    for (auto& [n, c] : d->children())
      if (c->type == NodeType::Dir) parent[c] = d->inode_num;
  }
  uint32_t count = static_cast<uint32_t>(order.size());
  super.inode_table_start = file->get_size(file.get());
  for (WNode* w : order) {
    uint32_t p = 0;
    if (w == root)
      p = count + 1;  // mksquashfs: the root's parent is count + 1
    else if (w->type == NodeType::Dir)
      p = parent.at(w);
    write_inode(w, p, wide_files);
  }
  check_rc(sqfs_meta_writer_flush(im.get()), "writing the inode table");
  check_rc(sqfs_meta_writer_flush(dm.get()), "writing the directory table");
  super.root_inode_ref = root->inode_ref;
  super.directory_table_start = file->get_size(file.get());
  check_rc(sqfs_meta_write_write_to_file(dm.get()), "writing the directory table");
  check_rc(sqfs_frag_table_write(frag.get(), file.get(), &super, cmp.get()), "writing the fragment table");
  if (opt.exportable) {
    check_rc(sqfs_dir_writer_write_export_table(dirwr.get(), file.get(), cmp.get(), root->inode_num,
                                                root->inode_ref, &super),
             "writing the export table");
  }
  check_rc(sqfs_id_table_write(ids.get(), file.get(), &super, cmp.get()), "writing the id table");
  if (xwr)
    check_rc(sqfs_xattr_writer_flush(xwr.get(), file.get(), &super, cmp.get()), "writing the xattr tables");
  super.inode_count = count;
  super.bytes_used = file->get_size(file.get());
  check_rc(sqfs_super_write(&super, file.get()), "writing the super block");
  pad_to(SQFS_DEVBLK_SIZE);
  check_rc(fd_file_flush(file.get()), "writing the image");
  stats.inodes = count;
  stats.image_bytes = file->get_size(file.get());
  finished = true;
  return stats.image_bytes;
}

}  // namespace trainimg::sqsh
