// SPDX-License-Identifier: GPL-3.0-or-later
// The reuse index (issue 26): `OUT.sqsh.index`, written by every layered
// import next to its image, says what a later import needs to copy this
// image's blocks instead of fetching, inflating and compressing them again:
//   - each layer's id (its diff_id) and every entry the layer's walk gave,
//     in walk order, so the merge can replay a shared layer without reading
//     it;
//   - for each walk position whose bytes the image holds, where they are
//     (sqsh::FileExtent);
//   - what binds the index to its image: the super block's bytes_used and
//     inode_table_start, the SHA-256 of the tables (inode_table_start to
//     bytes_used: every inode, and so every extent, is in them), the
//     compressor, block size and data compression;
//   - the SHA-256 of all of the above, last.
// Any mismatch makes the index unusable (the import goes on cold and says
// why). Format: docs/import.md, "Block reuse". Internal to builder/.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "builder/import/import.h"
#include "inspect/sources/source.h"
#include "sqsh/sqsh.h"

namespace trainimg::builder {

/// An index file around `sections` (the 'L', 'E', 'X' and 'B' records as
/// ReuseIndexWriter writes them): the magic before, the SHA-256 trailer and
/// the end mark after. For the fuzz harness, which reaches the section
/// parser with it.
std::string frame_reuse_index(std::string_view sections);

/// Builds an index in memory while an import runs; write() publishes it.
class ReuseIndexWriter {
 public:
  ReuseIndexWriter();
  void begin_layer(const std::string& layer_id);
  void entry(const inspect::Entry& e);
  /// Walk position `seq` holds its bytes at `path` in the image.
  void owner(uint64_t seq, std::string path);
  /// Forget everything (the import starts again).
  void clear();
  /// After Writer::finish() (record_extents): looks every owner's extent up.
  void resolve(const sqsh::Writer& w);
  /// After the image is verified: binds the index to the image at
  /// `image_fd` and writes `index_path` atomically. Throws Error.
  void write(int image_fd, const sqsh::ImageInfo& info, const std::string& image_name,
             const std::string& index_path);

 private:
  std::string body_;
  uint64_t entries_ = 0;
  size_t count_at_ = std::string::npos;  // where the current layer's entry count goes
  std::vector<std::pair<uint64_t, std::string>> owners_;
};

/// A verified index and the image it belongs to, ready to lend blocks.
struct ReuseIndex {
  struct Layer {
    std::string id;
    uint64_t first_seq = 0;  ///< walk position of its first entry
    std::vector<inspect::Entry> entries;
  };
  std::vector<Layer> layers;
  std::unordered_map<uint64_t, sqsh::FileExtent> extents;  ///< walk position -> its bytes in the image
  sqsh::ImageInfo info;
};

/// Reads `image`'s index and checks it against the image (open on
/// `image_fd`, whose super block is `info`). Throws Error saying why the
/// index cannot be used (missing, damaged, for another image).
ReuseIndex read_reuse_index(const std::string& image, int image_fd, const sqsh::ImageInfo& info);

/// SHA-256 ("sha256:…") of bytes [inode_table_start, bytes_used) of the image.
std::string image_tables_digest(int fd, const sqsh::ImageInfo& info, const std::string& name);

}  // namespace trainimg::builder
