// SPDX-License-Identifier: GPL-3.0-or-later
// Reading one layer tar (plain, gzip or zstd; libarchive detects which) and
// offering its entries to a LayerVisitor. Shared by the docker-archive, OCI
// and dockerd sources. Hostile members are refused here, each as one Error
// naming the input, the layer and the member (with its tar offset):
// absolute names, `..` that climbs above the root, hard links to a member
// not seen earlier in the layer, members written through a symlink of the
// same layer, truncated or corrupt streams. Data nobody wants is skipped:
// seeked over when the bytes come from a seekable, uncompressed source.
#pragma once

#include <archive.h>
#include <archive_entry.h>

#include <cstdint>
#include <exception>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/fd.h"
#include "inspect/sources/archive_handles.h"
#include "common/sha256.h"
#include "inspect/sources/source.h"  // ContentReader, LayerVisitor

namespace trainimg::inspect {

/// Bytes [offset, offset+length) of an open file, read with pread; skip()
/// seeks (never past the end of the range).
class FileRange : public ContentReader {
 public:
  FileRange(int fd, uint64_t offset, uint64_t length, std::string name)
      : fd_(fd), begin_(offset), end_(offset + length), pos_(offset), name_(std::move(name)) {}
  size_t read(char* buf, size_t n) override;
  uint64_t skip(uint64_t n) override;
  bool seekable() const override { return true; }
  uint64_t position() const { return pos_ - begin_; }

 protected:
  int fd_;
  uint64_t begin_, end_, pos_;
  std::string name_;
};

/// Bytes [offset, offset+length) of an open file that nothing writes while it
/// is read (a verified blob of the cache, published by rename and never
/// written again), handed out in place from a window of the file mapped in
/// memory: no copy into a buffer, and no more of it resident in this process
/// than the window. read() and skip() are FileRange's (a copy is a copy).
/// Throws Error when the file is shorter than the range (a mapping would
/// fault).
class MappedRange : public FileRange {
 public:
  MappedRange(int fd, uint64_t offset, uint64_t length, std::string name);
  MappedRange(const MappedRange&) = delete;
  MappedRange& operator=(const MappedRange&) = delete;
  ~MappedRange() override { unmap(); }
  std::string_view read_view(std::span<char> scratch) override;

 private:
  void unmap();
  const char* map_ = nullptr;  ///< file bytes [map_at_, map_at_ + map_len_)
  uint64_t map_at_ = 0, map_len_ = 0;
};

/// Passes bytes through while hashing them. A skip that the inner source
/// seeks over makes the digest unknowable (verified() then says so), unless
/// `allow_seek` is false, in which case skipped bytes are read and hashed.
class HashingSource : public ContentReader {
 public:
  HashingSource(ContentReader& inner, bool allow_seek) : inner_(inner), allow_seek_(allow_seek) {}
  size_t read(char* buf, size_t n) override;
  std::string_view read_view(std::span<char> scratch) override;
  uint64_t skip(uint64_t n) override;
  bool seekable() const override { return allow_seek_ && inner_.seekable(); }
  /// Reads what is left (at most `max_left` bytes, else Error "trailing
  /// data") and returns the digest, or nullopt when bytes were seeked over.
  std::optional<std::string> finish(const std::string& file, const std::string& member, uint64_t max_left);
  uint64_t bytes() const { return bytes_; }
  void unread(uint64_t n) override { unread_ += n; }

 private:
  ContentReader& inner_;
  bool allow_seek_;
  bool hashed_all_ = true;
  uint64_t bytes_ = 0;
  uint64_t unread_ = 0;  // read ahead of the consumer's end: left, for finish()
  Sha256 sha_;
};

/// libarchive reading a tar (any compression filter) from a ContentReader. No
/// exception crosses libarchive: one thrown by the source is kept and
/// rethrown from next()/read(). Errors name `file` and `member`.
class TarReader {
 public:
  TarReader(ContentReader& in, std::string file, std::string member, size_t buffer_size = 64 * 1024);
  TarReader(const TarReader&) = delete;
  TarReader& operator=(const TarReader&) = delete;
  /// The next member's header, or nullptr at the end of the archive.
  archive_entry* next();
  /// Bytes of the current member's data; 0 at its end.
  size_t read(char* buf, size_t n);
  /// The current member's next bytes in place, in libarchive's buffer (valid
  /// until the next call); holes of a sparse member come as zeros written to
  /// `scratch`. Empty at the member's end. read() is a copy of these views.
  std::string_view read_view(std::span<char> scratch);
  /// Offset of the current member's header in the (uncompressed) tar.
  int64_t header_offset() const;
  /// Offset in the uncompressed tar just past what has been consumed: the
  /// start of the current member's data right after next().
  int64_t data_offset() const;
  /// True when a compression filter (gzip, zstd, …) was detected.
  bool compressed() const;
  /// Throws Error(file, "member: <context>: <what>").
  [[noreturn]] void fail(const std::string& context, const std::string& what) const;

 private:
  static la_ssize_t read_cb(archive*, void* self, const void** buf);
  static la_int64_t skip_cb(archive*, void* self, la_int64_t n);
  void check(int rc, const std::string& context);
  ContentReader& in_;
  std::string file_, member_;
  std::vector<char> buf_;
  size_t grow_to_ = 0;  ///< a compressed stream: bigger reads from the next one on
  std::exception_ptr error_;
  // The current member's data block from libarchive not yet handed out: its
  // bytes [block_, block_ + block_left_) start at offset block_offset_ of the
  // member; out_ bytes were handed out (a hole when out_ < block_offset_).
  const char* block_ = nullptr;
  size_t block_left_ = 0;
  int64_t block_offset_ = 0, out_ = 0;
  bool data_end_ = false;
  ArchiveReader a_;  // a member, so that a throwing constructor still frees it
  std::string last_name_;
};

/// The members of an uncompressed tar file, indexed once (headers only, every
/// data region seeked over), read in place afterwards as byte ranges of the
/// file: docker archives and OCI archives.
class TarIndex {
 public:
  struct Member {
    EntryType type = EntryType::File;
    uint64_t offset = 0, size = 0;
    std::string link;  ///< symlink target (verbatim) or hard-link target (member name)
  };
  /// Indexes the tar in `fd` (`size` bytes); false when it is compressed (no
  /// random access). Throws Error naming `file` for hostile or impossible
  /// members (names out of the archive, data past its end).
  bool index(int fd, uint64_t size, const std::string& file);
  bool contains(const std::string& name) const { return members_.count(name) != 0; }
  /// The regular file `name` is, through links inside the archive; nullptr
  /// when there is no such member. Throws Error for a directory, a link out
  /// of the archive or a chain of links too long.
  const Member* resolve(const std::string& name) const;
  /// A member's bytes, at most `max` of them (else Error): JSON documents.
  std::string read(const Member& m, const std::string& name, uint64_t max) const;

 private:
  int fd_ = -1;
  std::string file_;
  std::map<std::string, Member> members_;
};

/// A member name made absolute and normalised ("./usr/lib/" -> "/usr/lib"),
/// or nullopt with `why` set when it is absolute or climbs out of the root.
std::optional<std::string> safe_member_path(const std::string& raw, std::string& why);

}  // namespace trainimg::inspect
