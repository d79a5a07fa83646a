// SPDX-License-Identifier: GPL-3.0-or-later
// The merged view of an image: layers applied in order with whiteouts and
// opaque directories, later entries winning, symlinks resolved inside the
// image root only, plus what the caller captured from the files it wanted.
#pragma once

#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "inspect/source.h"

namespace trainimg::inspect {

struct MergedTree {
  std::map<std::string, Entry> entries;  ///< final view, by normalised path
  /// Entries present in some layer but deleted (or replaced by a different
  /// type) by a later one: what "all layers" scope sees and the final view
  /// does not (efa-stack-incomplete names the layer that deleted them).
  std::vector<Entry> removed;
  /// For removed entries: the layer whose whiteout removed them.
  std::map<std::string, std::string> removed_by;
  /// Whatever the capture callback returned for the final version of a file.
  std::map<std::string, nlohmann::json> captured;

  const Entry* lookup(const std::string& path) const;
  /// Follows symlinks (and hard links) component by component, never leaving
  /// the image root ("/.." stays "/"); nullopt when missing or a loop.
  std::optional<std::string> resolve(const std::string& path) const;
  /// Direct children of a directory, sorted.
  std::vector<std::string> children(const std::string& dir) const;
};

/// Decides, from the entry alone, whether its bytes are needed.
using WantFn = std::function<bool(const Entry&)>;
/// Reads what it needs from a wanted file and returns the facts it found.
using CaptureFn = std::function<nlohmann::json(const Entry&, ContentReader&)>;

/// Walks the source once and builds the merged view.
MergedTree build_tree(ImageSource& src, const WantFn& want, const CaptureFn& capture);

/// "/a/./b/../c" -> "/a/c"; never above "/". Used for tar names too.
std::string normalize_path(const std::string& p);

}  // namespace trainimg::inspect
