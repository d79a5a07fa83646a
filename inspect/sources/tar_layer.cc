// SPDX-License-Identifier: GPL-3.0-or-later
#include "inspect/sources/tar_layer.h"

#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <functional>
#include <stdexcept>
#include <string_view>
#include <utility>
#include <vector>

#include "common/error.h"
#include "common/hash_table.h"
#include "inspect/sources/inflate_ahead.h"
#include "inspect/sources/tar.h"  // walk_layer_tar
#include "inspect/tree.h"

namespace trainimg::inspect {

size_t FileRange::read(char* buf, size_t n) {
  n = static_cast<size_t>(std::min<uint64_t>(n, end_ - pos_));
  if (n == 0) return 0;
  for (;;) {
    ssize_t got = pread(fd_, buf, n, static_cast<off_t>(pos_));
    if (got >= 0) {
      pos_ += static_cast<uint64_t>(got);
      return static_cast<size_t>(got);
    }
    if (errno != EINTR) throw_errno(name_, "read at offset " + std::to_string(pos_));
  }
}

uint64_t FileRange::skip(uint64_t n) {
  uint64_t step = std::min(n, end_ - pos_);
  pos_ += step;
  return step;
}

MappedRange::MappedRange(int fd, uint64_t offset, uint64_t length, std::string name)
    : FileRange(fd, offset, length, std::move(name)) {
  struct stat st {};
  if (fstat(fd_, &st) != 0) throw_errno(name_, "fstat");
  if (static_cast<uint64_t>(st.st_size) < end_)
    throw Error(name_, "the file is " + std::to_string(st.st_size) + " bytes, " + std::to_string(end_) +
                           " were expected");
}

void MappedRange::unmap() {
  if (map_) munmap(const_cast<char*>(map_), map_len_);
  map_ = nullptr;
  map_len_ = 0;
}

std::string_view MappedRange::read_view(std::span<char>) {
  if (pos_ >= end_) return {};
  if (!map_ || pos_ >= map_at_ + map_len_) {
    // 8 MiB windows, their pages mapped at once (MAP_POPULATE: no fault per
    // page, read-ahead for what is not in the page cache yet).
    constexpr uint64_t kWindow = 8 << 20;
    unmap();
    uint64_t page = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
    map_at_ = pos_ / page * page;
    map_len_ = std::min(kWindow, end_ - map_at_);
    void* m =
        mmap(nullptr, map_len_, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd_, static_cast<off_t>(map_at_));
    if (m == MAP_FAILED) {
      map_len_ = 0;
      throw_errno(name_, "mmap at offset " + std::to_string(map_at_));
    }
    map_ = static_cast<const char*>(m);
  }
  std::string_view v(map_ + (pos_ - map_at_), map_at_ + map_len_ - pos_);
  pos_ += v.size();
  return v;
}

size_t HashingSource::read(char* buf, size_t n) {
  size_t got = inner_.read(buf, n);
  if (hashed_all_) sha_.update(buf, got);  // after a seek the digest is lost: save the work
  bytes_ += got;
  return got;
}

std::string_view HashingSource::read_view(std::span<char> scratch) {
  std::string_view got = inner_.read_view(scratch);
  if (hashed_all_) sha_.update(got.data(), got.size());
  bytes_ += got.size();
  return got;
}

uint64_t HashingSource::skip(uint64_t n) {
  if (!seekable()) return ContentReader::skip(n);  // read (and hash) what is skipped
  uint64_t got = inner_.skip(n);
  if (got > 0) hashed_all_ = false;
  bytes_ += got;
  return got;
}

std::optional<std::string> HashingSource::finish(const std::string& file, const std::string& member,
                                                 uint64_t max_left) {
  if (!hashed_all_) return std::nullopt;
  char buf[65536];
  uint64_t left = unread_;
  for (size_t got = 0; left <= max_left && (got = read(buf, sizeof buf)) > 0;) left += got;
  if (left > max_left)
    throw Error(file, member + ": more than " + std::to_string(max_left) + " bytes of trailing data after the end " +
                          "of the tar at offset " + std::to_string(bytes_ - left));
  return sha_.digest();
}

TarReader::TarReader(ContentReader& in, std::string file, std::string member, size_t buffer_size)
    : in_(in), file_(std::move(file)), member_(std::move(member)), buf_(buffer_size) {
  a_ = new_archive_reader();
  archive* a = a_.get();
  archive_read_support_filter_all(a);
  archive_read_support_format_tar(a);
  archive_read_support_format_empty(a);  // a 0-byte layer blob is an empty layer
  archive_read_set_read_callback(a, &TarReader::read_cb);
  archive_read_set_skip_callback(a, &TarReader::skip_cb);
  archive_read_set_callback_data(a, this);
  check(archive_read_open1(a), "open");
  // Small reads exist so that the data of unwanted members is seeked over;
  // a compressed stream is decompressed whole whatever is wanted, and 16 KiB
  // reads of a 600 MB gzip layer were 37,000 system calls.
  constexpr size_t kCompressedRead = 256 * 1024;
  if (compressed() && buf_.size() < kCompressedRead) grow_to_ = kCompressedRead;
}

la_ssize_t TarReader::read_cb(archive*, void* self, const void** buf) {
  auto* t = static_cast<TarReader*>(self);
  try {
    if (t->grow_to_) {  // libarchive is done with the previous block: it asks for the next one
      std::vector<char>(t->grow_to_).swap(t->buf_);
      t->grow_to_ = 0;
    }
    std::string_view got = t->in_.read_view(t->buf_);
    *buf = got.data();
    return static_cast<la_ssize_t>(got.size());
  } catch (...) {
    t->error_ = std::current_exception();
    return ARCHIVE_FATAL;
  }
}

la_int64_t TarReader::skip_cb(archive*, void* self, la_int64_t n) {
  auto* t = static_cast<TarReader*>(self);
  if (!t->in_.seekable() || n <= 0) return 0;  // libarchive then reads and drops
  try {
    return static_cast<la_int64_t>(t->in_.skip(static_cast<uint64_t>(n)));
  } catch (...) {
    t->error_ = std::current_exception();
    return ARCHIVE_FATAL;
  }
}

void TarReader::check(int rc, const std::string& context) {
  if (error_) std::rethrow_exception(std::exchange(error_, nullptr));
  if (rc >= ARCHIVE_WARN) return;
  const char* msg = archive_error_string(a_.get());
  fail(context, msg ? msg : "libarchive error " + std::to_string(rc));
}

void TarReader::fail(const std::string& context, const std::string& what) const {
  throw Error(file_, (member_.empty() ? "" : member_ + ": ") + context + ": " + what);
}

archive_entry* TarReader::next() {
  archive_entry* e = nullptr;
  int rc = archive_read_next_header(a_.get(), &e);
  if (rc == ARCHIVE_EOF) {
    if (error_) std::rethrow_exception(std::exchange(error_, nullptr));
    return nullptr;
  }
  if (rc < ARCHIVE_WARN || error_)  // the context is built only when it is needed
    check(rc, last_name_.empty()
                  ? "at tar offset " + std::to_string(data_offset())
                  : "after member '" + last_name_ + "' at tar offset " + std::to_string(data_offset()));
  const char* name = archive_entry_pathname(e);
  last_name_ = name ? name : "";
  block_ = nullptr;
  block_left_ = 0;
  block_offset_ = out_ = 0;
  data_end_ = false;
  return e;
}

// As archive_read_data() hands out a member, without its copy: data blocks in
// place, the holes between them as zeros, and a hole at the end too (the
// offset libarchive gives with ARCHIVE_EOF is the member's size).
std::string_view TarReader::read_view(std::span<char> scratch) {
  for (;;) {
    if (out_ < block_offset_) {
      size_t zeros =
          static_cast<size_t>(std::min<int64_t>(block_offset_ - out_, static_cast<int64_t>(scratch.size())));
      std::fill_n(scratch.data(), zeros, '\0');
      out_ += static_cast<int64_t>(zeros);
      return {scratch.data(), zeros};
    }
    if (block_left_ > 0) {
      std::string_view v(block_, block_left_);
      block_left_ = 0;
      out_ += static_cast<int64_t>(v.size());
      return v;
    }
    if (data_end_) return {};
    const void* p = nullptr;
    size_t size = 0;
    la_int64_t offset = 0;
    int rc = archive_read_data_block(a_.get(), &p, &size, &offset);
    if (error_) std::rethrow_exception(std::exchange(error_, nullptr));
    if (rc == ARCHIVE_EOF) {  // its offset is the member's size: a hole at the end comes before the end
      data_end_ = true;
      block_offset_ = std::max<int64_t>(block_offset_, offset);
      continue;
    }
    if (rc < ARCHIVE_WARN || offset < out_) {  // the context is built only when it is needed
      std::string context =
          "member '" + last_name_ + "' (header at tar offset " + std::to_string(header_offset()) + ")";
      if (rc < ARCHIVE_WARN) check(rc, context);
      fail(context, "sparse blocks out of order");
    }
    block_ = static_cast<const char*>(p);
    block_left_ = size;
    block_offset_ = offset;
  }
}

size_t TarReader::read(char* buf, size_t n) {
  size_t done = 0;
  while (done < n) {
    std::string_view v = read_view({buf + done, n - done});
    if (v.empty()) break;
    if (v.data() == buf + done) {  // zeros of a hole, written in place
      done += v.size();
      continue;
    }
    size_t take = std::min(v.size(), n - done);
    std::memcpy(buf + done, v.data(), take);
    done += take;
    // What did not fit stays for the next call: the rest of the block, at out_.
    block_ = v.data() + take;
    block_left_ = v.size() - take;
    out_ -= static_cast<int64_t>(block_left_);
    block_offset_ = out_;
  }
  return done;
}

int64_t TarReader::header_offset() const { return archive_read_header_position(a_.get()); }
int64_t TarReader::data_offset() const { return archive_filter_bytes(a_.get(), 0); }
bool TarReader::compressed() const { return archive_filter_count(a_.get()) > 1; }

std::optional<std::string> safe_member_path(const std::string& raw, std::string& why) {
  if (raw.empty()) {
    why = "empty member name";
    return std::nullopt;
  }
  // Docker's layer extraction cleans the name and joins it under the layer's
  // root: an absolute name is read relative to it, and '..' cannot climb
  // above a rooted name (GNU tar, enroot's extractor, strips the '/' too).
  if (raw[0] == '/') return normalize_path(raw);
  int depth = 0;
  size_t start = 0;
  while (start <= raw.size()) {
    size_t slash = std::min(raw.find('/', start), raw.size());
    std::string_view part(raw.data() + start, slash - start);
    if (part == "..") {
      if (--depth < 0) {
        why = "path traversal: '..' climbs out of the image root";
        return std::nullopt;
      }
    } else if (!part.empty() && part != ".") {
      ++depth;
    }
    start = slash + 1;
  }
  return normalize_path(raw);
}

namespace {

class MemberReader : public ContentReader {
 public:
  explicit MemberReader(TarReader& t) : t_(t) {}
  size_t read(char* buf, size_t n) override { return t_.read(buf, n); }
  std::string_view read_view(std::span<char> scratch) override { return t_.read_view(scratch); }

 private:
  TarReader& t_;
};

EntryType type_of(archive_entry* ae) {
  if (archive_entry_hardlink(ae)) return EntryType::Hardlink;
  switch (archive_entry_filetype(ae)) {
    case AE_IFDIR: return EntryType::Dir;
    case AE_IFLNK: return EntryType::Symlink;
    case AE_IFIFO: return EntryType::Fifo;
    case AE_IFCHR: return EntryType::CharDev;
    case AE_IFBLK: return EntryType::BlockDev;
    case AE_IFSOCK: return EntryType::Socket;
    default: return EntryType::File;
  }
}

// True when the member name needs no normalising: not empty, not absolute,
// every part a plain name (not empty, "." or ".."); one trailing '/' allowed.
bool plain_name(std::string_view s) {
  return !s.empty() && plain_parts(s);
}

// An exact set of paths for one layer: the names in one arena, an open
// addressing table of 16-byte slots (offset and state, length, 32 bits of
// the hash). A std::unordered_set<string> cost one allocation and a rehash
// share per regular file (11% of a large layer's walk); this costs an append.
// Erased names stay in the arena.
class PathSet {
 public:
  bool empty() const { return live_ == 0; }
  bool contains(std::string_view p) const { return live_ != 0 && find(p, hash(p)) != kNone; }

  void insert(std::string_view p) {
    if (p.size() > UINT32_MAX) throw std::length_error("path too long");
    const uint64_t h = hash(p);
    if (find(p, h) != kNone) return;
    if ((occupied_ + 1) * 4 > slots_.size() * 3) rebuild();
    place(Slot::make(arena_.size(), kLive, static_cast<uint32_t>(p.size()), h), h);
    arena_.append(p);
    ++occupied_;
    ++live_;
  }

  void erase(std::string_view p) {
    if (live_ == 0) return;
    if (size_t i = find(p, hash(p)); i != kNone) {
      slots_[i].set_state(kErased);  // still occupied: probing passes over it
      --live_;
    }
  }

 private:
  static constexpr size_t kNone = SIZE_MAX;
  enum : uint8_t { kFree = 0, kLive, kErased };
  struct Slot {
    uint64_t offset_state = 0;  // arena offset << 2 | state
    uint32_t length = 0;
    uint32_t hash_hi = 0;  // the hash's upper half (its lower bits pick the slot)
    static Slot make(size_t offset, uint8_t state, uint32_t length, uint64_t h) {
      return Slot{static_cast<uint64_t>(offset) << 2 | state, length, static_cast<uint32_t>(h >> 32)};
    }
    uint8_t state() const { return static_cast<uint8_t>(offset_state & 3); }
    size_t offset() const { return static_cast<size_t>(offset_state >> 2); }
    void set_state(uint8_t s) { offset_state = (offset_state & ~uint64_t{3}) | s; }
  };
  static_assert(sizeof(Slot) == 16);

  static uint64_t hash(std::string_view p) { return std::hash<std::string_view>{}(p); }

  size_t find(std::string_view p, uint64_t h) const {
    if (slots_.empty()) return kNone;
    const size_t mask = slots_.size() - 1;
    const auto hi = static_cast<uint32_t>(h >> 32);
    for (size_t i = h & mask;; i = (i + 1) & mask) {
      const Slot& s = slots_[i];
      if (s.state() == kFree) return kNone;
      if (s.state() == kLive && s.hash_hi == hi && s.length == p.size() &&
          std::string_view(arena_).substr(s.offset(), s.length) == p)
        return i;
    }
  }

  // Slot `s` whose name hashes to `h` (the table position comes from it).
  void place(const Slot& s, uint64_t h) {
    const size_t mask = slots_.size() - 1;
    size_t i = h & mask;
    while (slots_[i].state() != kFree) i = (i + 1) & mask;
    slots_[i] = s;
  }
  // A slot whose name is in the arena already (a rebuild).
  void place(const Slot& s) { place(s, hash(std::string_view(arena_).substr(s.offset(), s.length))); }

  // A table at most half full of live slots, without the erased ones.
  void rebuild() {
    size_t n = std::max<size_t>(1024, slots_.size());
    while ((live_ + 1) * 2 > n) n *= 2;
    std::vector<Slot> old = std::exchange(slots_, std::vector<Slot>(n));
    for (const Slot& s : old)
      if (s.state() == kLive) place(s);
    occupied_ = live_;
  }

  std::vector<Slot> slots_;  // a power of two long
  size_t occupied_ = 0;      // live and erased slots
  size_t live_ = 0;
  std::string arena_;
};

// The regular files of one layer (hard-link targets), by a 64-bit hash of
// the path: 8 bytes a path in an open addressing table, where an exact set
// keeps every name (a 500,000-file layer: some 40 MB more, for as long as the
// layer is walked). Two paths of one hash (odds about 2^-64 a pair) only let
// a link to a missing target past this check; the tree ignores such a link
// and an import's merge refuses it.
using PathHashes = StringHashTable<>;

// Tracks what one layer has written, to refuse members that only make sense
// as an attack on an extractor.
class LayerChecks {
 public:
  LayerChecks(TarReader& t) : t_(t) {}

  // Fills every field of `e` but its layer; `e` is reused from member to
  // member so that its strings keep their buffers.
  void convert(archive_entry* ae, Entry& e) {
    const char* raw = archive_entry_pathname(ae);
    const std::string_view name = raw ? raw : "";
    std::string why;
    if (plain_name(name)) {  // nearly every member: "usr/lib/x" or "usr/lib/"
      e.path.assign(1, '/');
      e.path += name.substr(0, name.size() - (name.back() == '/'));
    } else {
      auto path = safe_member_path(std::string(name), why);
      if (!path) t_.fail(where(name), why);
      e.path = std::move(*path);
    }
    e.type = type_of(ae);
    e.mode = archive_entry_perm(ae) & 07777;
    e.uid = static_cast<uint32_t>(archive_entry_uid(ae));
    e.gid = static_cast<uint32_t>(archive_entry_gid(ae));
    e.mtime = archive_entry_mtime(ae);
    e.size = e.type == EntryType::File
                 ? static_cast<uint64_t>(std::max<la_int64_t>(archive_entry_size(ae), 0))
                 : 0;
    e.rdev_major = e.rdev_minor = 0;
    e.link_target.clear();
    e.xattrs.clear();
    if (e.type == EntryType::CharDev || e.type == EntryType::BlockDev) {
      e.rdev_major = static_cast<uint32_t>(archive_entry_rdevmajor(ae));
      e.rdev_minor = static_cast<uint32_t>(archive_entry_rdevminor(ae));
    }
    if (e.type == EntryType::Symlink) {
      const char* target = archive_entry_symlink(ae);
      e.link_target = target ? target : "";
    }
    if (e.type == EntryType::Hardlink) {
      const std::string target = archive_entry_hardlink(ae);
      auto t = safe_member_path(target, why);
      if (!t) t_.fail(where(name), "hard link target '" + target + "': " + why);
      if (!files_.contains(*t)) t_.fail(where(name), "hard link to missing target '" + target + "'");
      e.link_target = std::move(*t);
    }
    archive_entry_xattr_reset(ae);
    const char* xname = nullptr;
    const void* xval = nullptr;
    size_t xsize = 0;
    while (archive_entry_xattr_next(ae, &xname, &xval, &xsize) == ARCHIVE_OK)
      e.xattrs[xname] = std::string(static_cast<const char*>(xval), xsize);
    check_parents(e.path, name);
    record(e);
  }

 private:
  std::string where(std::string_view name) const {
    return "member '" + std::string(name) + "' (header at tar offset " + std::to_string(t_.header_offset()) +
           ")";
  }

  // A member below a symlink written by the same layer would be written
  // through that symlink by a naive extractor: the classic escape.
  // Members come grouped by directory, so the directory found clean for the
  // previous member is remembered (forgotten whenever a symlink is added).
  void check_parents(const std::string& path, std::string_view name) {
    if (symlinks_.empty()) return;
    const auto last = path.rfind('/');
    if (last == 0 || last == std::string::npos) return;
    if (std::string_view(path).substr(0, last) == clean_dir_) return;
    for (auto slash = last; slash != 0 && slash != std::string::npos; slash = path.rfind('/', slash - 1)) {
      const std::string_view parent = std::string_view(path).substr(0, slash);
      if (symlinks_.contains(parent))
        t_.fail(where(name), "written through the symlink '" + std::string(parent) + "' of the same layer");
    }
    clean_dir_.assign(path, 0, last);
  }

  void record(const Entry& e) {
    if (!symlinks_.empty()) symlinks_.erase(e.path);
    if (e.type == EntryType::Symlink) {
      symlinks_.insert(e.path);
      clean_dir_.clear();
    }
    if (e.type == EntryType::File || e.type == EntryType::Hardlink) files_.insert(e.path);
    else
      files_.erase(e.path);
  }

  TarReader& t_;
  PathSet symlinks_;
  PathHashes files_;       // hard-link targets
  std::string clean_dir_;  // no symlink of this layer at or above it
};

}  // namespace

void walk_layer_tar(ContentReader& raw, const LayerInput& where, LayerVisitor& v) {
  // A gzip layer is inflated on a thread of its own, ahead of this one.
  InflateAhead in(raw, where.file, "layer " + where.member);
  // Seekable: small reads, so that unwanted data is seeked over, not read ahead.
  TarReader t(in, where.file, "layer " + where.member, in.seekable() ? 16 * 1024 : 256 * 1024);
  LayerChecks checks(t);
  Entry e;  // reused for every member (see convert)
  e.layer = where.layer_id;
  v.begin_layer(where.layer_id, where.index);
  while (archive_entry* ae = t.next()) {
    checks.convert(ae, e);
    if (v.entry(e) && e.type == EntryType::File) {
      MemberReader r(t);
      v.content(e, r);
    }
  }
  in.finish();
  v.end_layer(where.layer_id, where.index);
}

}  // namespace trainimg::inspect
