// SPDX-License-Identifier: GPL-3.0-or-later
#include "builder/import/reuse_index.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <future>

#include "builder/import/entry_codec.h"
#include "builder/publish/publish.h"
#include "common/error.h"
#include "common/fd.h"
#include "common/sha256.h"
#include "inspect/registry/registry.h"

namespace trainimg::builder {

namespace {

// Format 2 (format 1 held counts before each section, patched in memory;
// format 2 ends each section with a mark so that it streams to its file).
constexpr std::string_view kMagic = "TIMGIDX2";
constexpr std::string_view kEnd = "TIMGEND1";
constexpr uint64_t kMaxIndex = 4ull << 30;        // 4 GiB: far above any image's entries
constexpr uint8_t kEndOfLayer = 0xFF;             // where an entry's type would be
constexpr uint64_t kEndOfExtents = ~uint64_t{0};  // where a walk position would be
constexpr size_t kBuffer = 1u << 20;

using codec::put_str;
using codec::put_u32;
using codec::put_u64;
using codec::put_u8;

// What a bounds-checked codec::Reader of the index calls a fault.
constexpr std::string_view kDamaged = "damaged reuse index";

// An entry read over `e` and checked.
void check_entry(codec::Reader& r, inspect::Entry& e) {
  codec::read_entry(r, e);
  if (!inspect::is_normalized_path(e.path)) r.bad("entry path '" + e.path + "' is not normalised");
}

const std::string kIndexName = "reuse index";

// The whole file, in a buffer never zeroed first (it is read over at once).
struct FileBytes {
  std::unique_ptr<char[]> data;
  size_t size = 0;
  std::string_view view() const { return {data.get(), size}; }
};

FileBytes read_all(int fd, const std::string& name) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) throw_errno(name, "reading");
  if (!S_ISREG(st.st_mode)) throw Error(name, "not a regular file");
  if (static_cast<uint64_t>(st.st_size) > kMaxIndex) throw Error(name, "too large for a reuse index");
  FileBytes out{std::make_unique_for_overwrite<char[]>(static_cast<size_t>(st.st_size)),
                static_cast<size_t>(st.st_size)};
  ssize_t n = pread_full(fd, out.data.get(), out.size, 0);
  if (n < 0) throw_errno(name, "reading");
  if (static_cast<size_t>(n) < out.size) throw Error(name, "the file shrank while it was read");
  return out;
}

// The trailer: the digest of everything before it, then kEnd.
void seal(std::string& s) {
  put_str(s, sha256_digest(s));
  s.append(kEnd);
}

}  // namespace

std::string reuse_index_path(const std::string& image_path) {
  return image_path + ".index";
}

std::string image_tables_digest(int fd, const sqsh::ImageInfo& info, const std::string& name) {
  if (info.inode_table_start > info.bytes_used)
    throw Error(name, "the super block's table offsets are inconsistent");
  std::string tables(static_cast<size_t>(info.bytes_used - info.inode_table_start), '\0');
  ssize_t n = pread_full(fd, tables.data(), tables.size(), info.inode_table_start);
  if (n < 0) throw_errno(name, "reading the tables");
  if (static_cast<size_t>(n) < tables.size()) throw Error(name, "truncated image: the tables end early");
  return sha256_digest(tables);
}

std::string frame_reuse_index(std::string_view sections) {
  std::string s(kMagic);
  s.append(sections);
  seal(s);
  return s;
}

ReuseIndexWriter::ReuseIndexWriter(std::string index_path) : path_(std::move(index_path)) {
  clear();
}

ReuseIndexWriter::~ReuseIndexWriter() = default;

void ReuseIndexWriter::clear() {
  if (failed_) return;
  try {
    if (!out_) out_ = std::make_unique<PartialOutput>(path_, /*replace=*/true);
    if (::ftruncate(out_->fd(), 0) != 0 || ::lseek(out_->fd(), 0, SEEK_SET) != 0)
      throw_errno(path_, "truncating");
  } catch (const Error&) {
    fail();
  }
  sha_ = std::make_unique<Sha256>();
  buf_.assign(kMagic);
  section_ = 0;
  bound_ = false;
}

void ReuseIndexWriter::fail() {
  failed_ = std::current_exception();
  out_.reset();  // its partial file goes
  buf_.clear();
  buf_.shrink_to_fit();
}

void ReuseIndexWriter::flush() {
  if (failed_) {
    buf_.clear();
    return;
  }
  sha_->update(buf_);
  try {
    out_->file().write(buf_);
  } catch (const Error&) {
    fail();
  }
  buf_.clear();
}

void ReuseIndexWriter::end_section() {
  if (section_ == 'L') put_u8(buf_, kEndOfLayer);
  if (section_ == 'O') put_u64(buf_, kEndOfExtents);
  section_ = 0;
}

void ReuseIndexWriter::begin_layer(const std::string& layer_id) {
  end_section();
  put_u8(buf_, 'L');
  put_str(buf_, layer_id);
  section_ = 'L';
}

void ReuseIndexWriter::entry(const inspect::Entry& e) {
  if (section_ != 'L') begin_layer("");  // a walk without layers
  codec::put_entry(buf_, e);
  if (buf_.size() >= kBuffer) flush();
}

void ReuseIndexWriter::extent(uint64_t seq, const sqsh::FileExtent& x) {
  if (section_ != 'O') {
    end_section();
    put_u8(buf_, 'O');
    section_ = 'O';
  }
  put_u64(buf_, seq);
  put_u64(buf_, x.blocks_start);
  put_u32(buf_, static_cast<uint32_t>(x.blocks.size()));
  for (uint32_t b : x.blocks) put_u32(buf_, b);
  put_u32(buf_, x.fragment);
  put_u32(buf_, x.fragment_offset);
  put_u64(buf_, x.size);
  put_u64(buf_, x.sparse);
  if (buf_.size() >= kBuffer) flush();
}

void ReuseIndexWriter::bind(int image_fd, const sqsh::ImageInfo& info, const std::string& image_name) {
  if (failed_) std::rethrow_exception(failed_);
  end_section();
  put_u8(buf_, 'B');
  put_u64(buf_, info.bytes_used);
  put_u64(buf_, info.inode_table_start);
  put_str(buf_, image_tables_digest(image_fd, info, image_name));
  put_u32(buf_, static_cast<uint32_t>(info.compressor));
  put_u32(buf_, info.block_size);
  put_u8(buf_, info.data_compressed ? 1 : 0);
  flush();
  if (failed_) std::rethrow_exception(failed_);
  bound_ = true;
}

void ReuseIndexWriter::publish() {
  if (!bound_ || !out_) throw Error(path_, "internal error: the reuse index is published unbound");
  std::string trailer;
  put_str(trailer, sha_->digest());
  trailer.append(kEnd);
  out_->file().write(trailer);
  out_->commit();
  out_.reset();
}

namespace {
// The sections of an index whose framing was checked.
ReuseIndex parse_index(std::string_view body, const std::string& name, const std::string& image, int image_fd,
                       const sqsh::ImageInfo& info);
}  // namespace

ReuseIndex read_reuse_index(const std::string& image, int image_fd, const sqsh::ImageInfo& info) {
  const std::string name = reuse_index_path(image);
  UniqueFd fd(::open(name.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW));
  if (!fd) {
    if (errno == ENOENT) throw Error(name, "no reuse index next to the image (not made by trainimg import)");
    throw_errno(name, "opening");
  }
  // Whoever made the image made its index: one another account could write
  // would let it put entries into every image made from it.
  struct stat img {
  }, st{};
  if (::fstat(image_fd, &img) != 0 || ::fstat(fd.get(), &st) != 0) throw_errno(name, "reading");
  if (st.st_uid != img.st_uid)
    throw Error(name, "owned by uid " + std::to_string(st.st_uid) + ", the image by uid " +
                          std::to_string(img.st_uid));
  if (st.st_mode & 022) throw Error(name, "writable by other accounts");
  FileBytes file = read_all(fd.get(), name);
  const std::string_view data = file.view();
  // Trailer: the digest of everything before it, then kEnd.
  const size_t digest_len = 4 + 71;  // put_str of "sha256:" + 64 hex
  if (data.starts_with("TIMGIDX1"))
    throw Error(name, "a reuse index of an earlier trainimg (format 1); the next import writes format 2");
  if (data.size() < kMagic.size() + digest_len + kEnd.size() || !data.starts_with(kMagic) ||
      !data.ends_with(kEnd))
    throw Error(name, "not a trainimg reuse index, or a truncated one");
  const size_t body_end = data.size() - kEnd.size() - digest_len;
  const std::string_view body(data.data(), body_end);
  const std::string want = codec::Reader(data.substr(body_end, digest_len), name, kDamaged).str();
  // The digest is computed beside the parse (0.1 s of the 0.6 s an index of
  // 300,000 entries took on 2 cores) and checked before the parse's outcome,
  // thrown or not, counts: a damaged index is called damaged, whatever the
  // parse met (the parse is bounds-checked and fuzzed on any bytes).
  std::future<std::string> digest = std::async(std::launch::async, [body] { return sha256_digest(body); });
  auto check_digest = [&] {
    if (digest.get() != want) throw Error(name, "damaged reuse index: its digest does not match");
  };
  ReuseIndex idx;
  try {
    idx = parse_index(body, name, image, image_fd, info);
  } catch (...) {
    check_digest();
    throw;
  }
  check_digest();
  idx.bytes = std::move(file.data);  // the layers' entries view it
  return idx;
}

void ReuseIndex::for_each_entry(const Layer& l, const std::function<void(const inspect::Entry&)>& f) const {
  codec::Reader r(l.entries, kIndexName, kDamaged);  // checked by the parse
  inspect::Entry e;
  while (!r.done()) {
    codec::read_entry(r, e);
    f(e);
  }
}

void ReuseIndex::drop_entries() {
  for (Layer& l : layers) l.entries = {};
  bytes.reset();
}

namespace {

ReuseIndex parse_index(std::string_view body, const std::string& name, const std::string& image, int image_fd,
                       const sqsh::ImageInfo& info) {
  codec::Reader r(body, name, kDamaged);
  r.take(kMagic.size());
  ReuseIndex idx;
  uint64_t seq = 0;
  bool bound = false;
  while (!r.done()) {
    uint8_t tag = r.u8();
    if (tag == 'L') {
      ReuseIndex::Layer l;
      l.id = r.str();
      l.first_seq = seq;
      const size_t start = r.pos();
      for (inspect::Entry e; r.peek_u8() != kEndOfLayer; ++l.count) check_entry(r, e);
      l.entries = body.substr(start, r.pos() - start);
      r.u8();
      seq += l.count;
      idx.layers.push_back(std::move(l));
    } else if (tag == 'O') {
      for (uint64_t at = r.u64(); at != kEndOfExtents; at = r.u64()) {
        sqsh::FileExtent x;
        x.blocks_start = r.u64();
        uint32_t nb = r.u32();
        if (nb > body.size() / 4) r.bad(std::to_string(nb) + " blocks");
        x.blocks.resize(nb);
        for (uint32_t& b : x.blocks) b = r.u32();
        x.fragment = r.u32();
        x.fragment_offset = r.u32();
        x.size = r.u64();
        x.sparse = r.u64();
        if (at >= seq) r.bad("an extent for walk position " + std::to_string(at) + ", past the entries");
        if (!idx.extents.emplace(at, std::move(x)).second)
          r.bad("a second extent for walk position " + std::to_string(at));
      }
    } else if (tag == 'B') {
      uint64_t bytes_used = r.u64(), tables_at = r.u64();
      std::string tables = r.str();
      uint32_t compressor = r.u32(), block_size = r.u32();
      bool data_compressed = r.u8() != 0;
      if (bytes_used != info.bytes_used || tables_at != info.inode_table_start ||
          compressor != static_cast<uint32_t>(info.compressor) || block_size != info.block_size ||
          data_compressed != info.data_compressed)
        throw Error(name, "the index is for another image (its super block differs from " + image + "'s)");
      if (tables != image_tables_digest(image_fd, info, image))
        throw Error(name, "the index is for another image (the tables of " + image + " differ)");
      bound = true;
    } else {
      r.bad("unknown section '" + std::string(1, static_cast<char>(tag)) + "'");
    }
  }
  if (!bound) throw Error(name, "damaged reuse index: it does not name its image");
  idx.info = info;
  return idx;
}

}  // namespace

}  // namespace trainimg::builder
