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
#include <unordered_map>
#include <unordered_set>

#include "inspect/inspect.h"

namespace trainimg::builder {

/// `seq` of an entry that no walk produced (enroot's files, Docker's init layer).
inline constexpr uint64_t kGeneratedSeq = UINT64_MAX;

struct MergedNode {
  inspect::Entry entry;  ///< final metadata; never a whiteout
  size_t layer = 0;      ///< index of the layer it came from
  uint64_t seq = kGeneratedSeq;
  /// Regular files: the position whose bytes are the content (== seq).
  /// Hard links: the position of the source version, whose metadata is `source`.
  uint64_t content_seq = kGeneratedSeq;
  /// Hard links only (null otherwise): the metadata of the source version.
  std::unique_ptr<inspect::Entry> source;
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

  MergedView& view() { return view_; }
  const MergedView& view() const { return view_; }
  /// True when some regular file's version at `seq` lost to a later entry
  /// (its bytes are not the final content of its path).
  bool replaced_file(uint64_t seq) const { return replaced_files_.count(seq) != 0; }
  size_t replaced_file_count() const { return replaced_files_.size(); }

 private:
  static constexpr size_t kAllLayers = SIZE_MAX;
  void remove_subtree(const std::string& path, size_t below_layer);
  void remove_children(const std::string& dir, size_t below_layer);
  void erase(MergedView::iterator it);
  void ensure_parents(const std::string& path, int64_t mtime);
  void resolve_hardlink(MergedNode& n);

  MergedView view_;
  size_t layer_ = 0;
  std::string layer_id_;
  std::unordered_set<uint64_t> replaced_files_;
};

/// Which output path stores which walk position's bytes.
struct WritePlan {
  /// walk position -> the output path written as a regular file with them
  /// (views of the MergedView's keys: valid while the view keeps the path)
  std::unordered_map<uint64_t, std::string_view> content_owner;
  /// hard link path -> the output path of the regular file it shares
  std::map<std::string, std::string> links;
};

/// Builds the plan and rewrites the view so that every hard link names its
/// owner (`entry.link_target`), and a link whose source version is not final
/// anywhere becomes the regular-file owner itself (with `source`'s metadata).
WritePlan plan_writes(MergedView& view);

/// "/a/b" -> {"/a", "b"}; "/a" -> {"/", "a"}.
std::pair<std::string, std::string> split_path(const std::string& path);

}  // namespace trainimg::builder
