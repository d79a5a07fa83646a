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
#include <exception>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "builder/import/import.h"
#include "builder/publish/publish.h"
#include "common/sha256.h"
#include "inspect/sources/source.h"
#include "sqsh/sqsh.h"

namespace trainimg::builder {

/// An index file around `sections` (the 'L', 'O' and 'B' sections as
/// ReuseIndexWriter writes them): the magic before, the SHA-256 trailer and
/// the end mark after. For the fuzz harness, which reaches the section
/// parser with it.
std::string frame_reuse_index(std::string_view sections);

/// Streams an index to a partial file beside `index_path` while an import
/// runs (a 1 MiB buffer is all it holds); write() publishes it. A failure
/// to write is kept, never thrown before write(): an image does not fail
/// for its index.
class ReuseIndexWriter {
 public:
  explicit ReuseIndexWriter(std::string index_path);
  ~ReuseIndexWriter();
  ReuseIndexWriter(const ReuseIndexWriter&) = delete;
  ReuseIndexWriter& operator=(const ReuseIndexWriter&) = delete;
  void begin_layer(const std::string& layer_id);
  void entry(const inspect::Entry& e);
  /// Writer::finish()'s on_extent for a node tagged with walk position
  /// `seq`: the image holds that position's bytes at `x`. After every entry.
  void extent(uint64_t seq, const sqsh::FileExtent& x);
  /// Forget everything (the import starts again).
  void clear();
  /// After the image is verified, before it is published: binds the index
  /// to the image at `image_fd` (its super block and tables). Throws Error,
  /// also the one met while it was streamed.
  void bind(int image_fd, const sqsh::ImageInfo& info, const std::string& image_name);
  /// After the image is published: publishes the bound index atomically
  /// (never before its image: an index without its image is not left behind).
  void publish();

 private:
  void fail();
  void flush();
  void end_section();

  std::string path_;
  std::unique_ptr<PartialOutput> out_;
  std::unique_ptr<Sha256> sha_;  // of every byte flushed
  std::string buf_;
  char section_ = 0;  // 'L' or 'O' while one is open
  bool bound_ = false;
  std::exception_ptr failed_;
};

/// A verified index and the image it belongs to, ready to lend blocks.
struct ReuseIndex {
  struct Layer {
    std::string id;
    uint64_t first_seq = 0;    ///< walk position of its first entry
    uint64_t count = 0;        ///< its entries
    std::string_view entries;  ///< as the index holds them (entry_codec.h), in `bytes`
  };
  /// Each entry of `l` in order, into one Entry (no layer id) handed to `f`:
  /// no Entry is kept per entry (300,000 of them took 70 MB and their page
  /// faults were a tenth of a reused import's merge).
  void for_each_entry(const Layer& l, const std::function<void(const inspect::Entry&)>& f) const;
  /// The entries' bytes freed, once replayed (the extents stay).
  void drop_entries();
  std::vector<Layer> layers;
  std::unique_ptr<char[]> bytes;                           ///< the index file, which `entries` views
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
