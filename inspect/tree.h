// SPDX-License-Identifier: GPL-3.0-or-later
// The merged view of an image: layers applied in order with whiteouts and
// opaque directories, later entries winning, symlinks resolved inside the
// image root only, plus what the caller captured from the files it wanted.
//
// Stored flat: one fixed-size node per path (parent index, name in a shared
// arena, layer by index, doubly linked children) and one open-addressing
// index keyed by (parent, name), so a 200,000-file image costs about 60
// bytes a file and no allocation per entry (a std::map<std::string, Entry>
// cost four allocations and ~300 bytes a file).
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "inspect/sources/source.h"

namespace trainimg::inspect {

/// What the merged view keeps of an entry. The views point into the tree's
/// storage and stay valid while the tree lives and is not changed.
struct TreeEntry {
  EntryType type = EntryType::File;
  uint32_t mode = 0;
  uint64_t size = 0;
  uint32_t rdev_major = 0, rdev_minor = 0;
  std::string_view link_target;  ///< symlink target verbatim; hard-link target path (normalised)
  std::string_view layer;        ///< layer id that wrote it ("" for the implicit root)
};

/// An entry a layer wrote and a later layer deleted or replaced by another type.
struct RemovedEntry {
  std::string path;
  EntryType type = EntryType::File;
  uint32_t mode = 0;
  uint64_t size = 0;
  uint32_t rdev_major = 0, rdev_minor = 0;
  std::string_view link_target;
  std::string_view layer;       ///< the layer that wrote it
  std::string_view removed_by;  ///< the layer whose whiteout (or new entry) removed it
};

class MergedTree {
 public:
  MergedTree();

  /// The entry at `path` (normalised first, symlinks not followed).
  std::optional<TreeEntry> lookup(std::string_view path) const;
  /// Follows symlinks (and hard links) component by component, never leaving
  /// the image root ("/.." stays "/"); nullopt when missing or a loop.
  std::optional<std::string> resolve(const std::string& path) const;
  /// Direct children of a directory (not followed if a symlink), sorted.
  std::vector<std::string> children(const std::string& dir) const;
  /// Paths of every entry whose last component is `name`, sorted. A view
  /// over a random-access source answers only the names given to
  /// build_tree() as `remember` (std::logic_error for others).
  std::vector<std::string> find_named(std::string_view name) const;
  /// Every path in the view (the root included), sorted as strings (a view
  /// over a random-access source lists every directory for it: for tests).
  std::vector<std::string> paths() const;
  /// Number of entries held, the root included (over a random-access
  /// source: only those of the directories listed so far).
  size_t size() const { return live_; }
  /// Sizes the index for about n entries (a source that knows its count).
  void reserve(size_t n);

  /// Entries present in some layer but deleted (or replaced by a different
  /// type) by a later one: what "all layers" scope sees and the final view
  /// does not (efa-stack-incomplete names the layer that deleted them).
  /// Sorted by path; made from the tree's dead nodes (nothing is copied
  /// while building).
  std::vector<RemovedEntry> removed() const;
  /// The layer that last removed `path`; std::out_of_range if none did.
  std::string removed_by(const std::string& path) const;
  /// Whatever the capture callback returned for the final version of a file.
  std::map<std::string, nlohmann::json> captured;

  /// A walk stops after this many entries (all layers together; lazy views
  /// keep nothing per entry and are not counted): a valid image may hold
  /// ten million empty files, and the view must stay within memory and time
  /// (issue 15: 512 MiB, 60 s). The largest real images hold a few hundred
  /// thousand.
  static constexpr uint64_t kMaxEntries = 2'000'000;
  /// Why the view is incomplete (the walk stopped at kMaxEntries), for a
  /// note; empty when the whole image was read.
  std::string truncated;

 private:
  friend class TreeBuilder;
  static constexpr uint32_t kNone = UINT32_MAX;
  // 48 bytes. Devices keep (major << 32 | minor) in `size` (they have none).
  struct Node {
    uint32_t parent, name_off, name_len;
    uint32_t first_child, next, prev;
    uint32_t link_off, link_len;
    uint64_t size;
    uint16_t layer;  ///< index into layers_: the walk's layer sequence, not the id
    uint16_t mode;   ///< permission bits (07777)
    EntryType type;
    bool live;
    bool loaded;  ///< lazy views: its children have been listed
  };
  static_assert(sizeof(Node) == 48);

  std::string_view name_of(uint32_t n) const {
    return {names_.get() + nodes_[n].name_off, nodes_[n].name_len};
  }
  std::string path_of(uint32_t n) const;
  TreeEntry view(uint32_t n) const;
  uint32_t child(uint32_t parent, std::string_view name) const;
  uint32_t find_node(std::string_view normalised) const;
  /// Lazy views: lists directory n from the source the first time it is
  /// asked about (the view is logically const: it only fills itself in).
  void ensure_loaded(uint32_t n) const;
  // Mutation (TreeBuilder).
  /// Adds a child; `slot` is the empty index slot child_slot() found for it.
  uint32_t add(uint32_t parent, std::string_view name, const Entry& e, uint32_t layer, size_t slot);
  /// child(), also giving the index slot probed last (the free one on a miss).
  uint32_t child_slot(uint32_t parent, std::string_view name, size_t& slot) const;
  uint32_t append_name(std::string_view s);
  void grow_names(size_t need);
  void set(uint32_t n, const Entry& e, uint32_t layer);
  void unlink(uint32_t n);
  void index_insert(uint32_t n, size_t slot = SIZE_MAX);
  void grow_index();
  /// Sizes the index for about n entries (rebuilt when it grows, or always
  /// with `rebuild`).
  void size_index(size_t n, bool rebuild = false);
  size_t slot_of(uint32_t parent, std::string_view name) const;

  /// Memory for the big flat arrays: 2 MiB aligned and marked for
  /// transparent huge pages when large, so filling tens of MB costs a few
  /// page faults rather than thousands (they dominated on small VMs).
  struct BlockFree {
    void operator()(void* p) const noexcept;
  };
  template <typename T>
  using Block = std::unique_ptr<T, BlockFree>;
  static void* alloc_block(size_t bytes);

  // Nodes in fixed chunks: growing never copies them.
  class Nodes {
   public:
    Node& operator[](uint32_t n) { return chunks_[n / kPerChunk].get()[n % kPerChunk]; }
    const Node& operator[](uint32_t n) const { return chunks_[n / kPerChunk].get()[n % kPerChunk]; }
    size_t size() const { return size_; }
    void push_back(const Node& x) {
      if (size_ % kPerChunk == 0)
        chunks_.emplace_back(static_cast<Node*>(alloc_block(sizeof(Node) * kPerChunk)));
      (*this)[static_cast<uint32_t>(size_++)] = x;
    }

   private:
    // One 2 MiB huge page per chunk, filled (a division by a constant is a multiply).
    static constexpr uint32_t kPerChunk = (2u << 20) / sizeof(Node);
    std::vector<Block<Node>> chunks_;
    size_t size_ = 0;
  };
  Nodes nodes_;
  Block<char> names_;  ///< every name and link target, back to back
  size_t names_size_ = 0, names_cap_ = 0;
  std::deque<std::string> layers_{""};  ///< a deque: views into it stay valid as it grows
  /// Open addressing, linear probing: (hash's high 32 bits << 32) | node,
  /// so most probes never touch a node; kEmpty or kTomb.
  Block<uint64_t> index_;
  size_t index_size_ = 0;  ///< slots (a power of two, or 0)
  size_t index_used_ = 0;  ///< slots holding a node or a tombstone
  size_t live_ = 0;
  /// Set for random-access sources: the view then holds only the
  /// directories queries have touched, not every entry of the image.
  std::shared_ptr<DirLister> lister_;
  std::vector<std::string> remember_, named_;  ///< find_named() in lazy views
};

/// Decides, from the entry alone, whether its bytes are needed.
using WantFn = std::function<bool(const Entry&)>;
/// Reads what it needs from a wanted file and returns the facts it found.
using CaptureFn = std::function<nlohmann::json(const Entry&, ContentReader&)>;

/// Walks the source once and builds the merged view. For a source with a
/// lister() only captures are kept during the walk and directories are
/// listed when queries reach them (memory bounded by what is asked, not by
/// the image's size). `remember`: base names find_named() must answer.
MergedTree build_tree(ImageSource& src, const WantFn& want, const CaptureFn& capture,
                      const std::vector<std::string>& remember = {});

/// True when every '/'-separated part of s is a plain name (not empty, "."
/// or ".."); one trailing '/' is allowed. Such a name needs no rewriting by
/// normalize_path() beyond a leading '/'.
bool plain_parts(std::string_view s);

}  // namespace trainimg::inspect
