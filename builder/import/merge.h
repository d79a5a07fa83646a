// SPDX-License-Identifier: GPL-3.0-or-later
// Layers merged on the fly, without a temporary tree (issue 5, "Streaming").
//
// LayerMerger applies the entries of a walk (layers lowest first) the way
// overlayfs shows them to `docker export`: `.wh.NAME` removes NAME and what is
// below it from lower layers, `.wh..wh..opq` empties a directory of its lower
// layers' children, a later entry replaces an earlier one (a directory over a
// directory merges and takes the newer metadata; anything else replaces the
// whole subtree), a missing or non-directory parent becomes a directory.
// What it keeps per path is metadata plus the walk position (`seq`) of the
// version that won (not the layer id, which MergedNode::layer indexes, nor a
// second copy of the metadata unless the path is a hard link), so memory grows
// with the number of paths, never with the bytes: the content of each final file is read later, from the
// walk, at exactly that position.
//
// Hard links: a tar hard link names an earlier entry; the link keeps the
// bytes that entry had when the link was made, even if a later layer replaces
// or deletes the target path. So each link records the walk position of its
// source version, and plan_writes() decides which output path stores those
// bytes and which paths link to it.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "common/hash_table.h"
#include "inspect/sources/source.h"

namespace trainimg::builder {

/// `seq` of an entry that no walk produced (enroot's files, Docker's init layer).
inline constexpr uint64_t kGeneratedSeq = UINT64_MAX;

/// An entry as the view keeps it: without its path (the view's key) or layer
/// id (MergedNode::layer), and extended attributes only where there are
/// some, so that a path costs about half what an inspect::Entry would.
struct StoredEntry {
  inspect::EntryType type = inspect::EntryType::File;
  uint32_t mode = 0, uid = 0, gid = 0;
  uint64_t size = 0;
  int64_t mtime = 0;
  uint32_t rdev_major = 0, rdev_minor = 0;
  std::string link_target;
  std::shared_ptr<const std::map<std::string, std::string>> xattrs;  ///< null: none

  static StoredEntry of(const inspect::Entry& e);
  /// The entry again, at `path` (its layer id empty).
  inspect::Entry at(const std::string& path) const;
  /// The same into `e` (its layer id kept), reusing the room its strings
  /// have: a replay of many entries allocates little.
  void fill(inspect::Entry& e, std::string path) const;
};

struct MergedNode {
  StoredEntry entry;  ///< final metadata; never a whiteout
  size_t layer = 0;   ///< index of the layer it came from
  uint64_t seq = kGeneratedSeq;
  /// Regular files: the position whose bytes are the content (== seq).
  /// Hard links: the position of the source version, whose metadata is `source`.
  uint64_t content_seq = kGeneratedSeq;
  /// Hard links only: the metadata of the source version; null for a link
  /// whose source was written and dropped (LayerMerger::drop_written): then
  /// `entry.link_target` is the path that holds those bytes.
  std::unique_ptr<inspect::Entry> source;
  /// Directories: how many children drop_written() took out of the view.
  uint32_t written_below = 0;
};

using MergedView = std::map<std::string, MergedNode, std::less<>>;

class LayerMerger {
 public:
  void begin_layer(size_t index, std::string layer_id);
  /// Applies one entry of the current layer; `seq` is its position in the walk.
  /// Throws Error (file = the layer id) for a hard link whose target does not
  /// exist in this or a lower layer.
  void apply(const inspect::Entry& e, uint64_t seq);
  /// Puts a generated entry (kGeneratedSeq), replacing what is at its path
  /// unless `keep_dir` and both are directories (then the image's is kept).
  void put(const inspect::Entry& e, bool keep_dir = false);
  /// Synthesises parents that a lower-layer whiteout left missing. Call once
  /// after the walk.
  void finish();

  /// The view to change from outside (erasing what the passes took): it
  /// forgets ensure_parents()'s last parent, which such an erase could take.
  MergedView& view() {
    last_parent_.clear();
    has_last_ = false;
    return view_;
  }
  const MergedView& view() const { return view_; }
  /// A single pass wrote the regular file at `path` (walk position `seq`) to
  /// the image: the view forgets it, so memory holds one tree, the writer's,
  /// not two. What the merge still needs of it is kept in 16 bytes: a later
  /// entry at that path, a parent turned into something else, a whiteout or
  /// a put() over it sets written_then_replaced() (the single pass must start
  /// again in two passes); a hard link to it links to `path`.
  void drop_written(const std::string& path, uint64_t seq);
  bool was_written(std::string_view path) const { return written_.find(path) != nullptr; }
  /// True when something the merge did hit a file drop_written() took away.
  bool written_then_replaced() const { return written_replaced_; }
  /// The newest mtime among the dropped files (0 when none).
  int64_t newest_written_mtime() const { return newest_written_mtime_; }

 private:
  static constexpr size_t kAllLayers = SIZE_MAX;
  void remove_subtree(const std::string& path, size_t below_layer);
  void remove_children(const std::string& dir, size_t below_layer);
  void erase(MergedView::iterator it);
  void ensure_parents(const std::string& path, int64_t mtime);
  void ensure_parents_slow(const std::string& path, int64_t mtime);
  void resolve_hardlink(MergedNode& n, const std::string& path);

  void touch_written(std::string_view path);
  /// view_.lower_bound(path), from the entry apply() last placed when `path`
  /// comes right after it (a walk in the view's order: most layers' tars).
  MergedView::iterator lower_bound(const std::string& path);

  MergedView view_;
  /// The entry apply() last placed, while erased_ is last_erased_ (no erase
  /// since, so it is still in the view).
  MergedView::iterator last_;
  uint64_t last_erased_ = 0;
  bool has_last_ = false;
  /// The parent ensure_parents() last made sure of, and erased_ then: entries
  /// come directory by directory, and only erase() (counted in erased_) can
  /// take a directory or its ancestors away or turn them into something else.
  std::string last_parent_;
  uint64_t last_parent_erased_ = 0, erased_ = 0;
  /// Hash of a dropped path -> its walk position (16 bytes a slot). Two paths
  /// with one 64-bit hash only make a single pass start again.
  StringHashTable<uint64_t> written_;
  bool written_replaced_ = false;
  int64_t newest_written_mtime_ = 0;
  size_t layer_ = 0;
  std::string layer_id_;
};

/// Which output path stores which walk position's bytes.
struct WritePlan {
  /// A walk position and the view's node (path and entry) written as a
  /// regular file with its bytes: valid while the view keeps that node, so
  /// that no pass looks the path up again.
  struct Owner {
    uint64_t seq;
    MergedView::iterator node;
    const std::string& path() const { return node->first; }
    bool operator<(const Owner& o) const { return seq != o.seq ? seq < o.seq : path() < o.path(); }
  };
  /// Ascending by position, the order a walk meets them.
  std::vector<Owner> content_owner;
  /// hard link path -> the output path of the regular file it shares
  std::map<std::string, std::string> links;
  /// The output path of the bytes at `seq`, or null.
  const std::string* owner(uint64_t seq) const;
};

/// Builds the plan and rewrites the view so that every hard link names its
/// owner (`entry.link_target`), and a link whose source version is not final
/// anywhere becomes the regular-file owner itself (with `source`'s metadata).
WritePlan plan_writes(MergedView& view);

/// "/a/b" -> {"/a", "b"}; "/a" -> {"/", "a"}.
std::pair<std::string, std::string> split_path(const std::string& path);

}  // namespace trainimg::builder
