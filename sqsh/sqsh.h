// SPDX-License-Identifier: GPL-3.0-or-later
// trainimg's squashfs library: read and write squashfs 4.0 images (what
// enroot and Pyxis use as `.sqsh`) through libsquashfs 1.2.0, with LZO
// through Debian's liblzo2 (libsquashfs has no LZO). See docs/sqsh.md.
//
// Errors: every failure throws trainimg::Error whose file is the image path
// (or the name given to the Writer) and whose message says what failed and,
// for structural problems, at which offset. Nothing here prints.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace trainimg {
class CpuSlots;  // common/cpu_slots.h
}

namespace trainimg::sqsh {

/// The compressor ids of the squashfs super block, plus None (our
/// "--compression none": gzip id, every block stored uncompressed).
enum class Compressor : uint16_t { None = 0, Gzip = 1, Lzma = 2, Lzo = 3, Xz = 4, Lz4 = 5, Zstd = 6 };

/// "gzip", "lzma", "lzo", "xz", "lz4", "zstd", "none".
std::string_view to_string(Compressor c);
/// Parses the names above; nullopt otherwise.
std::optional<Compressor> parse_compressor(std::string_view name);

enum class NodeType { File, Dir, Symlink, Hardlink, Fifo, CharDev, BlockDev, Socket };
std::string_view to_string(NodeType t);

/// One entry of an image, as read or as handed to the Writer.
struct Node {
  std::string path;  ///< absolute: "/" for the root, "/usr/lib/x" otherwise
  NodeType type = NodeType::File;
  uint32_t mode = 0;  ///< permission bits incl. setuid/setgid/sticky, no type bits
  uint32_t uid = 0, gid = 0;
  uint64_t size = 0;                          ///< regular files only
  uint32_t mtime = 0;                         ///< squashfs stores unsigned 32-bit seconds
  uint32_t rdev_major = 0, rdev_minor = 0;    ///< char/block devices
  std::string link_target;                    ///< symlink target verbatim; for Hardlink the first path seen
  std::map<std::string, std::string> xattrs;  ///< full names ("security.capability")
  uint32_t inode_number = 0;                  ///< read side only
  uint32_t nlink = 1;                         ///< read side only
  /// Write side, regular files: the caller's number for the file, handed
  /// back with where its bytes went (WriterOptions::on_extent).
  uint64_t tag = kNoTag;
  static constexpr uint64_t kNoTag = ~uint64_t{0};
};

/// Super block facts, for reports and the import sidecar.
struct ImageInfo {
  Compressor compressor = Compressor::Gzip;
  uint32_t block_size = 0;
  uint32_t inode_count = 0;
  uint32_t mtime = 0;
  uint64_t bytes_used = 0;
  uint32_t fragment_count = 0;
  uint16_t id_count = 0;
  uint16_t flags = 0;  ///< SQFS_SUPER_FLAGS
  bool exportable = false;
  bool has_xattrs = false;
  bool data_compressed = true;  ///< false for `mksquashfs -noD` (enroot's default)
  bool compressor_options = false;
  uint32_t lzo_algorithm = 0, lzo_level = 0;  ///< from the options block (LZO only)
  uint64_t inode_table_start = 0;             ///< where the data region ends and the tables begin
};

/// Where a regular file's bytes sit in an image, as its inode says: what
/// block reuse (Writer::add_reused_file) copies without decompressing.
struct FileExtent {
  uint64_t blocks_start = 0;
  std::vector<uint32_t> blocks;    ///< on-disk size words (bit 24: stored raw; 0: a hole)
  uint32_t fragment = 0xFFFFFFFF;  ///< fragment table index, or none
  uint32_t fragment_offset = 0;
  uint64_t size = 0;
  uint64_t sparse = 0;  ///< bytes of holes (extended inodes)
};

/// One fragment table entry: a fragment block's position and size word.
struct Fragment {
  uint64_t start = 0;
  uint32_t size = 0;  ///< on-disk size word (bit 24: stored raw)
};

/// Sequential reader of one file's bytes (bounded memory: the data reader
/// caches one block and one fragment block). Valid during Visitor::content().
class FileReader {
 public:
  virtual ~FileReader() = default;
  /// Reads up to n bytes; 0 at the end. Throws Error on corrupt data.
  virtual size_t read(char* buf, size_t n) = 0;
  /// Skips n bytes without decompressing them; returns bytes skipped.
  virtual uint64_t skip(uint64_t n) = 0;
  virtual uint64_t size() const = 0;
};

class Visitor {
 public:
  virtual ~Visitor() = default;
  /// Every entry, depth first, names in byte order, the root ("/") first.
  /// Return true to receive content() for a regular file.
  virtual bool entry(const Node& n) = 0;
  virtual void content(const Node& n, FileReader& r) {
    (void)n;
    (void)r;
  }
};

/// A squashfs image opened for reading. Owns its file descriptor.
class Image {
 public:
  /// Opens and validates: super block (magic, version 4.0, block size,
  /// bytes_used within the file, table offsets in order and inside the
  /// image), compressor (gzip, xz, lzo, lz4, zstd; lzma if libsquashfs has
  /// it) and its options, id, fragment and xattr tables. Throws Error
  /// naming `path` and the offending offset on failure.
  explicit Image(const std::string& path);
  /// The same on a file descriptor the caller keeps open (e.g. to verify a
  /// file just written); `name` is used in messages.
  Image(int fd, const std::string& name);
  ~Image();
  Image(const Image&) = delete;
  Image& operator=(const Image&) = delete;

  const ImageInfo& info() const;
  const std::string& path() const;

  /// One pass over the tree. Later paths of a hard-linked inode (same inode
  /// reached twice) come as NodeType::Hardlink with link_target = first
  /// path. Throws Error on directory loops, bad names, absurd sizes, corrupt
  /// tables or data; exceptions thrown by the visitor pass through.
  void walk(Visitor& v);

  /// Looks `path` up without following symlinks; nullopt when missing.
  std::optional<Node> stat(const std::string& path);
  /// The direct children of directory `path` (symlinks not followed), in
  /// directory order, with the checks walk() makes; empty when `path` is
  /// missing or not a directory. Hard links are not resolved here (every
  /// name comes as the inode's own type; nlink and inode_number tell).
  std::vector<Node> list(const std::string& path);
  /// The first `max_bytes` of a regular file (nullopt when missing or not a
  /// regular file). Used for small config files (/etc/environment, /etc/rc).
  std::optional<std::string> read_file(const std::string& path, size_t max_bytes);
  /// The fragment table, every entry (block reuse). Throws Error when corrupt.
  std::vector<Fragment> fragments();
  /// The file descriptor the image is read through (valid while it lives).
  int fd() const;

  struct Impl;  ///< internal (sqsh/image_impl.h)

 private:
  std::unique_ptr<Impl> impl_;
};

/// Reads the super block and every table back and walks the whole directory
/// tree (no file data), checking that the inode count matches the super
/// block. Throws Error on any problem. The Writer's output check.
ImageInfo verify(int fd, const std::string& name);

/// How the Writer lays out the image.
struct WriterOptions {
  Compressor compressor = Compressor::Zstd;
  std::optional<int> level;        ///< default: zstd 3, gzip 9, xz 6, lzo1x_999 8
  uint32_t block_size = 1u << 20;  ///< power of two, 4 KiB .. 1 MiB
  unsigned num_workers = 0;        ///< block processor threads; 0 = usable_cpus() (common/cpus.h)
  bool compress_data = true;       ///< false = `mksquashfs -noD` (data and fragment blocks raw)
  bool all_root = false;           ///< every uid/gid 0 (`-all-root`)
  /// Shared with the other writers and readers of one job: each block is
  /// compressed holding one of them (--jobs as a cap, common/cpu_slots.h).
  CpuSlots* cpu_slots = nullptr;
  /// Super block mtime and that of implied parent directories; default:
  /// the time of construction. Set it (e.g. from SOURCE_DATE_EPOCH) for
  /// byte-identical output from identical input.
  std::optional<uint32_t> mtime;
  bool clamp_mtimes = false;  ///< inode mtimes later than `mtime` become `mtime` (SOURCE_DATE_EPOCH)
  bool exportable = true;     ///< NFS export table (mksquashfs default)
  bool deduplicate = true;    ///< identical files/fragments stored once
  bool keep_xattrs = true;    ///< false drops every xattr handed in
  /// For data to be copied into another image and nothing else (an
  /// import's layer segments): regular files only, kept by tag alone (no
  /// tree: their paths only name them in messages), and finish() writes the
  /// data and fragment blocks and no table, no super block. on_extent says
  /// where each file went, data_info() and fragments() what add_reuse_source()
  /// needs of the result.
  bool blocks_only = false;
  /// Called by finish(), once per regular file inode of the image whose
  /// Node had a tag (a hard link's inode: once, with its first name's tag):
  /// where its bytes were written. Nothing is kept for it in the Writer.
  std::function<void(uint64_t tag, FileExtent)> on_extent;
  /// For many writers side by side (an import's layer segments): file data
  /// goes to the block processor and the output on the caller's thread (no
  /// feed thread and its 4 MiB ring, no write-behind thread and its 8 MiB
  /// ring) and fewer blocks are in flight. Same bytes, less memory and
  /// fewer threads; slower for one writer alone.
  bool lean = false;
  /// A lean writer also starts the write-back of every 32 MiB it wrote
  /// (sync_file_range), as a writer with its write-behind thread always
  /// does: for a segment whose blocks the output will share by reflink, so
  /// that the disk writes them while the CPUs compress, not after.
  bool write_back = false;
};

/// What block reuse did in one image (Writer::reuse_stats()).
struct ReuseStats {
  uint64_t files = 0;         ///< regular files whose blocks were copied
  uint64_t file_bytes = 0;    ///< their sizes (bytes never decompressed nor compressed)
  uint64_t copied_bytes = 0;  ///< bytes copied from the earlier images
  uint64_t dead_bytes = 0;    ///< padding before copied ranges (their offsets modulo 4 KiB kept)
  uint64_t unused_bytes =
      0;  ///< copied bytes no file of this image uses (prefetched, then replaced or removed)
};

/// Streaming squashfs writer. Entries come in any order (tar order); file
/// data goes through libsquashfs's block processor as it arrives (memory
/// bounded by its queue, not by the file sizes); the tree and inodes stay
/// in memory and are written by finish(). Parent directories that were not
/// added are created (0755, root, fixed mtime or 0). Adding a path again
/// replaces it (a directory over a directory updates its metadata only).
///
/// The Writer writes to `fd` from offset 0 and never closes it; the caller
/// owns it (e.g. an AtomicFile, committed after finish() and verify()).
/// Any Error leaves the Writer unusable; the caller discards the output.
class Writer {
 public:
  Writer(int fd, std::string name, WriterOptions opts);
  ~Writer();
  Writer(const Writer&) = delete;
  Writer& operator=(const Writer&) = delete;

  /// A directory, symlink (link_target), fifo, socket or device node.
  void add(const Node& n);
  /// A regular file: begin_file, any number of write() calls, end_file().
  void begin_file(const Node& n);
  void write(const void* data, size_t n);
  void end_file();
  /// `path` becomes another name of the inode at `target` (added earlier;
  /// not a directory). Throws Error when the target is missing.
  void add_hardlink(const std::string& path, const std::string& target);
  /// Removes `path` and everything under it (whiteouts). No-op when missing.
  void remove(const std::string& path);

  /// Block reuse. An earlier image whose data blocks files may be copied
  /// from: `fd` stays the caller's and open until finish(); `info` is its
  /// super block (Image::info()), `fragments` its fragment table. Throws
  /// Error when its compressor, block size or data compression differ from
  /// this image's (the blocks could not be read back). Returns its id.
  int add_reuse_source(int fd, const std::string& name, const ImageInfo& info,
                       std::vector<Fragment> fragments);
  /// A regular file whose bytes are `x` in reuse source `source`: finish()
  /// copies its compressed blocks and fragment block as they are. `n.size`
  /// must equal x.size. Throws Error for an extent outside that image's data.
  void add_reused_file(const Node& n, int source, FileExtent x);
  /// Copies the blocks of every file added from reuse source `source` now,
  /// after the data written so far, instead of in finish(): the source's
  /// fd is not read again (the caller may close it) and no more files may
  /// come from it. Every such file is copied, even one removed later (its
  /// blocks then stay as bytes no inode names), so call it once the files
  /// are final. Waits for the block processor's blocks in flight; throws
  /// Error inside a file.
  void copy_reused_now(int source);
  /// As copy_reused_now(), but the bytes are copied on a thread of the
  /// Writer's own (up to 4 at once; a fifth waits for the oldest), so that
  /// the caller goes on to its next source while the kernel copies; `keep`
  /// (the caller's hold on the source, say its file) is released there once
  /// they are copied. The source must stay readable until then or until
  /// finish() or the Writer's end, which wait (or stop) and throw a copy's
  /// error, as does the call that waits for the oldest.
  void copy_reused_soon(int source, std::shared_ptr<void> keep);
  /// Starts copying the blocks (and fragment blocks) of `files`, extents in
  /// reuse source `source`, after the data written so far, on a thread of
  /// its own, and returns: the files later added from them with
  /// add_reused_file() need no copy, a head start while the caller works
  /// out which files it keeps. `files` is read before it returns. Data
  /// written meanwhile goes after the copies; copy_reused_now(source) and
  /// finish() wait for them and throw their error. Bytes of these no file of
  /// this image ends up using stay as unused bytes
  /// (ReuseStats::unused_bytes). Throws Error for an extent outside that
  /// image's data.
  void prefetch_reused(int source, const std::vector<const FileExtent*>& files);

  /// Flushes data blocks, writes inodes, directories, fragment, export, id
  /// and xattr tables and the super block, pads to 4 KiB. Returns the image
  /// size in bytes.
  uint64_t finish();

  struct Stats {
    uint64_t input_bytes = 0;
    uint64_t image_bytes = 0;
    uint64_t inodes = 0;
    uint64_t files = 0;
  };
  Stats stats() const;
  /// What block reuse did: from every source (-1), or from one.
  ReuseStats reuse_stats(int source = -1) const;

  /// After finish(): fragment table entry `index` of this image.
  std::optional<Fragment> fragment(uint32_t index) const;
  /// After finish(): the whole fragment table.
  std::vector<Fragment> fragments() const;
  /// After finish() of a blocks_only writer: what an Image of it would say
  /// of its data (compressor, block size, data compression, where the data
  /// ends: inode_table_start = bytes_used).
  ImageInfo data_info() const;

  struct Impl;  ///< internal (sqsh/writer.cc)

 private:
  std::unique_ptr<Impl> impl_;
};

/// Normalises an image path: "a//b/./c/" -> "/a/b/c"; throws Error(context)
/// on ".." components or NUL bytes (never lets an entry escape the root).
std::string normalize_image_path(std::string_view p, const std::string& context);

}  // namespace trainimg::sqsh
