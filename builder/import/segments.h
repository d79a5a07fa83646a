// SPDX-License-Identifier: GPL-3.0-or-later
// The data pass of a layered import, one layer per thread (issue 26, "Scale").
//
// Each layer that holds bytes the image keeps is read on a thread of its own
// (ImageSource::walk_layer) and its files are compressed into a *segment*: a
// squashfs image of their own in an unnamed temporary file beside the output,
// written by a sqsh::Writer with its FileExtents recorded. The segments are
// joined into the image in layer order, each as soon as it is ready, as block
// reuse joins an earlier image (sqsh::Writer::add_reuse_source /
// add_reused_file, then copy_reused_now while the other layers compress):
// their blocks are copied as they are, shared with copy_file_range where the
// file system has reflinks. What a segment holds depends on its layer only, never on the
// thread count or on which finished first, so the image is the same whatever
// --jobs is; a source that cannot read a layer on its own (a registry layer
// not fetched yet) is walked once in order into the same segments.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "common/atomic_file.h"
#include "inspect/sources/source.h"
#include "sqsh/sqsh.h"

namespace trainimg::builder {

/// A file whose bytes a layer holds at walk position `seq`.
struct SegmentFile {
  uint64_t seq = 0;
  std::string expect;         ///< the path the walk names at `seq` (the output path, or a hard link's source)
  sqsh::Node node;            ///< the node the image gets (its output path and metadata)
  sqsh::FileExtent extent{};  ///< where the segment holds the bytes (filled by the data pass)
};

/// The files one layer contributes, in walk order.
struct LayerFiles {
  size_t layer = 0;
  uint64_t first_seq = 0;  ///< walk position of the layer's first entry
  uint64_t blob_bytes =
      0;  ///< its size in the source (of two layers with as many file bytes, the bigger starts first)
  std::vector<SegmentFile> files;
};

/// One layer's files compressed: the file (data and fragment blocks only,
/// sqsh::WriterOptions::blocks_only), what an image of it would say of its
/// data, and its fragment table.
struct Segment {
  std::unique_ptr<AtomicFile> file;  ///< never committed: the kernel or the destructor removes it
  sqsh::ImageInfo info;
  std::vector<sqsh::Fragment> fragments;
};

struct SegmentOptions {
  sqsh::WriterOptions writer;  ///< the image's options (threads and extents are set here)
  std::string output;          ///< the image's path: segments are made in its directory
  std::string reference;       ///< the source, for messages
  unsigned jobs = 1;           ///< threads in all
  bool share_blocks = false;   ///< shares_blocks(output)
};

/// Whether the file system of `path`'s directory shares blocks between
/// files (FICLONERANGE works between two unnamed files there: XFS with
/// reflink, btrfs): then the join shares a segment's blocks instead of
/// copying them, and a segment's write-back is started as it is written.
bool shares_blocks(const std::string& path);

/// Streams one file's bytes from `r` into `w` (begin_file … end_file),
/// checking the size the header gave (an Error names `reference` and
/// `path`) and for a signal between chunks; returns the bytes written.
uint64_t copy_file_content(sqsh::Writer& w, const sqsh::Node& node, const std::string& path,
                           inspect::ContentReader& r, const std::string& reference);

/// One layer's regular files compressed as the merge pass reads the layer:
/// every file with bytes, before the merge knows which of them the image
/// keeps (docs/import.md, "One read per layer"). The import joins the ones
/// it keeps; the others' blocks are never copied.
struct CompressedLayer {
  size_t layer = 0;
  std::vector<uint64_t> at;               ///< each file's entry index within the layer, ascending
  std::vector<sqsh::FileExtent> extents;  ///< where the segment holds each (same order)
  Segment seg;
  /// The extent of the file at entry index `k` of the layer, or null when
  /// that entry was not compressed (not a regular file with bytes).
  sqsh::FileExtent* find(uint64_t k);
};

/// How each segment writer runs when `threads` layers are written at once
/// with `jobs` threads in all, for a layer after which `later` layers are
/// still to start.
struct SegmentThreads {
  /// Compressor threads: at least two (unless jobs < 2), so that reading a
  /// layer (inflate, tar) runs beside its compression.
  unsigned workers = 1;
  /// sqsh::WriterOptions::lean, when more than 4 segments are written at
  /// once. Up to 4, each gets the feed and write-behind threads (12 MiB of
  /// rings): the walking thread then hands files over in batches instead of
  /// waking the compressors per file (500,000 small files: 12.7 -> 8.4 s).
  /// The last few layers to start are never lean: while they are read,
  /// fewer layers than threads are left, and each remaining reader is the
  /// bound of its layer (on the 16-core machine, the last 8 of 40 layers
  /// kept 4-9 cores busy with their compressors idle; docs/import.md). The
  /// feed and write-behind threads take the libsquashfs calls and the writes
  /// off the reader.
  bool lean = true;
};
inline constexpr size_t kLastLayersNotLean = 4;
SegmentThreads segment_threads(unsigned jobs, size_t threads, size_t later = kLastLayersNotLean);

/// Compresses every regular file with bytes of one layer into a segment, as
/// the layer is walked: entry() for each entry in walk order, content() for
/// those it said true to, then finish().
class LayerCompressor {
 public:
  /// `stop` (if set) is looked at between files: true ends the walk quietly
  /// (another layer failed). `t`: how its segment writer runs.
  LayerCompressor(size_t layer, const SegmentOptions& o, SegmentThreads t,
                  const std::function<void(uint64_t)>& file_done, const std::atomic<bool>* stop = nullptr);
  ~LayerCompressor();
  LayerCompressor(const LayerCompressor&) = delete;
  LayerCompressor& operator=(const LayerCompressor&) = delete;
  /// The layer's next entry; true when its bytes are wanted (content() follows).
  bool entry(const inspect::Entry& e);
  void content(const inspect::Entry& e, inspect::ContentReader& r);
  /// Every file delivered: the segment and where it holds each file.
  CompressedLayer finish();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// The order in which write_segments() starts the layers (indexes into
/// `layers`): the biggest first, as the last to finish bounds the pass, by
/// the bytes of the files each writes (inflating and compressing both cost
/// by them; a blob's size says little: a layer of libraries that compress
/// 8:1 has the blob of a layer of wheels four times its files' size), then
/// by blob size, then in layer order.
std::vector<size_t> start_order(const std::vector<LayerFiles>& layers);

/// Writes every layer's segment and hands each to `join`, on the calling
/// thread and in the order of `layers`; `file_done(bytes)` is called from the
/// worker threads after each file. `meanwhile`, if set, runs once on the
/// calling thread while the first segments are being written (before the
/// first join; when the layers cannot be read on their own, the walk has
/// this thread: at the first join, or after the walk).
/// An error of any layer stops the others and is thrown here, after every
/// thread has ended.
void write_segments(inspect::ImageSource& src, std::vector<LayerFiles>& layers, const SegmentOptions& opt,
                    const std::function<void(uint64_t)>& file_done,
                    const std::function<void(LayerFiles&, Segment&)>& join,
                    const std::function<void()>& meanwhile = {});

/// The merge pass's read, one layer per thread: each of `layers` (indexes,
/// ascending) is walked with ImageSource::walk_layer and its entries
/// gathered, then replayed to `v` in order (begin_layer with `ids[i]`,
/// entries, end_layer) on the calling thread; at most 2 x jobs layers'
/// entries are held at once. With `compress`, each layer's files are also
/// compressed as it is read (LayerCompressor, `file_done` after each) and
/// its CompressedLayer handed to `compressed` after its end_layer, on the
/// calling thread; without, content is never asked for. `before` (if set)
/// runs on the calling thread while the first layers are read, before the
/// first of them is replayed (block reuse replays its shared layers there).
void walk_layers_in_parallel(inspect::ImageSource& src, const std::vector<size_t>& layers, unsigned jobs,
                             const std::vector<std::string>& ids, inspect::LayerVisitor& v,
                             const SegmentOptions* compress = nullptr,
                             const std::function<void(uint64_t)>& file_done = {},
                             const std::function<void(CompressedLayer&)>& compressed = {},
                             const std::function<void()>& before = {});

}  // namespace trainimg::builder
