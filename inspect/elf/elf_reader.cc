// SPDX-License-Identifier: GPL-3.0-or-later
#include "inspect/elf/elf_reader.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <optional>

namespace trainimg::inspect::elf {

namespace {

static_assert(std::endian::native == std::endian::little, "the ELF reader decodes little-endian in place");

constexpr uint32_t kPtLoad = 1, kPtDynamic = 2;
constexpr uint32_t kPfW = 2;
constexpr int64_t kDtNull = 0, kDtNeeded = 1, kDtHash = 4, kDtStrtab = 5, kDtSymtab = 6, kDtStrsz = 10,
                  kDtSoname = 14, kDtRpath = 15, kDtRunpath = 29, kDtGnuHash = 0x6ffffef5;
constexpr uint64_t kEhdrSize = 64, kPhdrSize = 56, kSymSize = 24, kDynSize = 16;
// A dynamic section is a few hundred bytes; anything this large is hostile.
constexpr uint64_t kMaxDynamic = 1u << 20;
constexpr uint32_t kMaxPhnum = 4096;
// Version text after a marker: "2.30.7+cuda13.4", "1.21.1-aws".
constexpr size_t kMaxVersionText = 64;

std::string hex(uint64_t v) {
  char buf[32];
  snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

template <class T>
T load(const std::string& b, uint64_t off) {
  T v;
  std::memcpy(&v, b.data() + off, sizeof v);
  return v;
}

// Whether [off, off+len) lies inside a buffer of `size` bytes, overflow-safe.
bool inside(uint64_t off, uint64_t len, uint64_t size) { return off <= size && len <= size - off; }

bool is_version_char(char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '.' || c == '+' ||
         c == '-' || c == '_' || c == '~';
}

// Finds marker strings in a byte stream seen chunk by chunk; keeps only a tail
// long enough for a marker and its version text to straddle two chunks.
class MarkerScanner {
 public:
  MarkerScanner(const std::vector<std::string>& markers, std::map<std::string, std::string>& found)
      : markers_(markers), found_(found) {
    for (const auto& m : markers_) keep_ = std::max(keep_, m.size() + kMaxVersionText);
  }
  bool pending() const { return found_.size() < markers_.size(); }

  void feed(std::string_view chunk, bool final) {
    if (!pending()) return;
    carry_.append(chunk);
    for (const auto& m : markers_) {
      if (m.empty() || found_.count(m)) continue;
      size_t p = 0;
      while ((p = carry_.find(m, p)) != std::string::npos) {
        size_t start = p + m.size();
        if (!final && carry_.size() - start < kMaxVersionText) break;  // wait for more bytes
        size_t end = start;
        while (end < carry_.size() && end - start < kMaxVersionText && is_version_char(carry_[end])) ++end;
        if (end > start) {
          found_[m] = carry_.substr(start, end - start);
          break;
        }
        p = start;  // "NCCL version %s" in a format string: keep looking
      }
    }
    if (carry_.size() > keep_) carry_.erase(0, carry_.size() - keep_);
  }

 private:
  const std::vector<std::string>& markers_;
  std::map<std::string, std::string>& found_;
  std::string carry_;
  size_t keep_ = 0;
};

struct Phdr {
  uint32_t type, flags;
  uint64_t offset, vaddr, filesz;
};

class Reader {
 public:
  Reader(ContentReader& r, const ElfOptions& opt, ElfInfo& out)
      : r_(r), opt_(opt), out_(out), scan_(opt.markers, out.markers) {}

  void run();

 private:
  // Appends up to n bytes to dst; returns how many arrived (short at EOF).
  uint64_t read_into(std::string& dst, uint64_t n);
  // Moves forward to `to`, scanning for markers while any are pending.
  bool advance_to(uint64_t to);
  bool fail(std::string why) {
    if (out_.error.empty()) out_.error = std::move(why);
    return false;
  }
  std::optional<uint64_t> file_offset(uint64_t vaddr) const;
  bool read_header();
  bool read_dynamic(const Phdr& dyn, std::string& bytes);
  void parse_dynamic(const std::string& dyn);
  std::optional<uint64_t> symbol_count(uint64_t symoff, uint64_t hash, uint64_t gnu_hash, uint64_t stroff) const;
  void read_symbols(uint64_t symoff, uint64_t count, uint64_t stroff, uint64_t strsz);
  std::string string_at(uint64_t stroff, uint64_t strsz, uint64_t idx) const;

  ContentReader& r_;
  const ElfOptions& opt_;
  ElfInfo& out_;
  MarkerScanner scan_;
  uint64_t pos_ = 0;
  std::string prefix_;  // bytes [0, prefix_.size()) of the file
  std::vector<Phdr> phdrs_;
};

uint64_t Reader::read_into(std::string& dst, uint64_t n) {
  char buf[64 * 1024];
  uint64_t got = 0;
  while (got < n) {
    size_t want = static_cast<size_t>(std::min<uint64_t>(sizeof buf, n - got));
    size_t k = r_.read(buf, want);
    if (k == 0) {
      scan_.feed({}, true);
      break;
    }
    dst.append(buf, k);
    scan_.feed(std::string_view(buf, k), false);
    got += k;
    pos_ += k;
  }
  return got;
}

bool Reader::advance_to(uint64_t to) {
  if (to <= pos_) return true;
  if (!scan_.pending()) {
    uint64_t k = r_.skip(to - pos_);
    pos_ += k;
    return pos_ == to;
  }
  char buf[64 * 1024];
  while (pos_ < to) {
    size_t want = static_cast<size_t>(std::min<uint64_t>(sizeof buf, to - pos_));
    size_t k = r_.read(buf, want);
    if (k == 0) {
      scan_.feed({}, true);
      return false;
    }
    scan_.feed(std::string_view(buf, k), false);
    pos_ += k;
  }
  return true;
}

std::optional<uint64_t> Reader::file_offset(uint64_t vaddr) const {
  for (const auto& p : phdrs_) {
    if (p.type != kPtLoad || vaddr < p.vaddr || vaddr - p.vaddr >= p.filesz) continue;
    uint64_t off = p.offset + (vaddr - p.vaddr);
    if (off < p.offset) return std::nullopt;  // overflow
    return off;
  }
  return std::nullopt;
}

bool Reader::read_header() {
  if (read_into(prefix_, kEhdrSize) < kEhdrSize) return false;
  if (std::memcmp(prefix_.data(), "\x7f" "ELF", 4) != 0) return false;
  if (prefix_[4] != 2 || prefix_[5] != 1) {
    out_.error = "not a little-endian ELF64 file";
    return false;
  }
  out_.is_elf = true;
  out_.type = load<uint16_t>(prefix_, 16);
  uint64_t phoff = load<uint64_t>(prefix_, 32);
  uint16_t phentsize = load<uint16_t>(prefix_, 54);
  uint16_t phnum = load<uint16_t>(prefix_, 56);
  if (phnum == 0) return true;
  if (phentsize != kPhdrSize || phnum > kMaxPhnum) return fail("bad program header table entry size or count");
  uint64_t phend = phoff + uint64_t{phnum} * kPhdrSize;
  // phoff near 2^64 wraps phend around to a small value: bound phoff too.
  if (phoff < kEhdrSize || phoff > opt_.max_prefix || phend > opt_.max_prefix) return fail("program headers at " + hex(phoff) + " out of bounds");
  if (read_into(prefix_, phend - prefix_.size()) < phend - kEhdrSize)
    return fail("program headers at " + hex(phoff) + " past the end of the file");
  for (uint16_t i = 0; i < phnum; ++i) {
    uint64_t o = phoff + uint64_t{i} * kPhdrSize;
    phdrs_.push_back({load<uint32_t>(prefix_, o), load<uint32_t>(prefix_, o + 4), load<uint64_t>(prefix_, o + 8),
                      load<uint64_t>(prefix_, o + 16), load<uint64_t>(prefix_, o + 32)});
  }
  return true;
}

bool Reader::read_dynamic(const Phdr& dyn, std::string& bytes) {
  if (dyn.filesz > kMaxDynamic || dyn.filesz % kDynSize != 0)
    return fail("dynamic section at " + hex(dyn.offset) + " has a bad size");
  if (inside(dyn.offset, dyn.filesz, prefix_.size())) {
    bytes = prefix_.substr(dyn.offset, dyn.filesz);
    return true;
  }
  if (dyn.offset < pos_) return fail("dynamic section at " + hex(dyn.offset) + " overlaps the headers");
  if (!advance_to(dyn.offset) || read_into(bytes, dyn.filesz) < dyn.filesz)
    return fail("dynamic section at " + hex(dyn.offset) + " past the end of the file");
  return true;
}

std::string Reader::string_at(uint64_t stroff, uint64_t strsz, uint64_t idx) const {
  if (idx >= strsz) return {};
  const char* b = prefix_.data() + stroff + idx;
  size_t n = strnlen(b, static_cast<size_t>(strsz - idx));
  if (n == strsz - idx) return {};  // unterminated
  return std::string(b, n);
}

std::optional<uint64_t> Reader::symbol_count(uint64_t symoff, uint64_t hash, uint64_t gnu_hash,
                                             uint64_t stroff) const {
  const uint64_t size = prefix_.size();
  if (auto h = hash ? file_offset(hash) : std::nullopt; h && inside(*h, 8, size))
    return load<uint32_t>(prefix_, *h + 4);  // nchain == number of symbols
  if (auto g = gnu_hash ? file_offset(gnu_hash) : std::nullopt; g && inside(*g, 16, size)) {
    uint64_t nbuckets = load<uint32_t>(prefix_, *g), symoffset = load<uint32_t>(prefix_, *g + 4);
    uint64_t bloom = load<uint32_t>(prefix_, *g + 8);
    uint64_t buckets = *g + 16 + bloom * 8;
    if (bloom > size || nbuckets > size || !inside(buckets, nbuckets * 4, size)) return std::nullopt;
    uint64_t last = 0;
    for (uint64_t b = 0; b < nbuckets; ++b) last = std::max<uint64_t>(last, load<uint32_t>(prefix_, buckets + b * 4));
    if (last < symoffset) return symoffset;
    uint64_t chain = buckets + nbuckets * 4;
    for (;; ++last) {  // walk the last chain to its terminator (low bit set)
      uint64_t at = chain + (last - symoffset) * 4;
      if (!inside(at, 4, size)) return std::nullopt;
      if (load<uint32_t>(prefix_, at) & 1) return last + 1;
    }
  }
  if (stroff > symoff) return (stroff - symoff) / kSymSize;  // .dynstr follows .dynsym
  return std::nullopt;
}

void Reader::read_symbols(uint64_t symoff, uint64_t count, uint64_t stroff, uint64_t strsz) {
  const uint64_t avail = symoff <= prefix_.size() ? (prefix_.size() - symoff) / kSymSize : 0;
  if (count > avail) {
    fail("dynamic symbol table at " + hex(symoff) + " extends past the kept first segment");
    count = avail;
  }
  for (uint64_t i = 1; i < count; ++i) {
    uint64_t o = symoff + i * kSymSize;
    uint32_t name = load<uint32_t>(prefix_, o);
    uint8_t info = static_cast<uint8_t>(prefix_[o + 4]);
    uint8_t other = static_cast<uint8_t>(prefix_[o + 5]);
    uint16_t shndx = load<uint16_t>(prefix_, o + 6);
    int bind = info >> 4, vis = other & 3;
    // Defined (not SHN_UNDEF), global/weak/unique, default or protected visibility.
    if (shndx == 0 || !(bind == 1 || bind == 2 || bind == 10) || !(vis == 0 || vis == 3)) continue;
    std::string s = string_at(stroff, strsz, name);
    if (s.empty() || (opt_.keep_symbol && !opt_.keep_symbol(s))) continue;
    out_.exports.push_back(std::move(s));
  }
  std::sort(out_.exports.begin(), out_.exports.end());
  out_.exports.erase(std::unique(out_.exports.begin(), out_.exports.end()), out_.exports.end());
}

std::vector<std::string> split_path(const std::string& s) {
  std::vector<std::string> out;
  size_t b = 0;
  while (b <= s.size()) {
    size_t e = s.find(':', b);
    if (e == std::string::npos) e = s.size();
    if (e > b) out.push_back(s.substr(b, e - b));
    b = e + 1;
  }
  return out;
}

void Reader::parse_dynamic(const std::string& dyn) {
  std::vector<uint64_t> needed;
  std::optional<uint64_t> soname, runpath, rpath;
  uint64_t strtab = 0, strsz = 0, symtab = 0, hash = 0, gnu_hash = 0;
  for (uint64_t o = 0; o + kDynSize <= dyn.size(); o += kDynSize) {
    int64_t tag = load<int64_t>(dyn, o);
    uint64_t val = load<uint64_t>(dyn, o + 8);
    if (tag == kDtNull) break;
    switch (tag) {
      case kDtNeeded: needed.push_back(val); break;
      case kDtSoname: soname = val; break;
      case kDtRunpath: runpath = val; break;
      case kDtRpath: rpath = val; break;
      case kDtStrtab: strtab = val; break;
      case kDtStrsz: strsz = val; break;
      case kDtSymtab: symtab = val; break;
      case kDtHash: hash = val; break;
      case kDtGnuHash: gnu_hash = val; break;
      default: break;
    }
  }
  auto stroff = file_offset(strtab);
  if (!strtab || !stroff || !inside(*stroff, strsz, prefix_.size())) {
    fail("dynamic string table at " + hex(strtab) + " is outside the kept first segment");
    return;
  }
  for (uint64_t n : needed)
    if (auto s = string_at(*stroff, strsz, n); !s.empty()) out_.needed.push_back(std::move(s));
  if (soname) out_.soname = string_at(*stroff, strsz, *soname);
  if (runpath) out_.runpath = split_path(string_at(*stroff, strsz, *runpath));
  if (rpath) out_.rpath = split_path(string_at(*stroff, strsz, *rpath));
  auto symoff = symtab ? file_offset(symtab) : std::nullopt;
  if (!symoff) return;
  if (auto count = symbol_count(*symoff, hash, gnu_hash, *stroff))
    read_symbols(*symoff, *count, *stroff, strsz);
  else
    fail("cannot size the dynamic symbol table at " + hex(*symoff));
}

void Reader::run() {
  if (!read_header() || phdrs_.empty()) return;
  // Keep the segment that starts the file: with the default -z separate-code
  // layout it holds exactly the headers, .dynsym, .dynstr and the hash tables.
  uint64_t prefix_end = prefix_.size();
  uint64_t scan_end = 0;
  const Phdr* dyn = nullptr;
  for (const auto& p : phdrs_) {
    if (p.type == kPtLoad && p.offset == 0) prefix_end = std::max(prefix_end, std::min(p.filesz, opt_.max_prefix));
    if (p.type == kPtLoad && !(p.flags & kPfW) && p.offset + p.filesz >= p.offset)
      scan_end = std::max(scan_end, p.offset + p.filesz);
    if (p.type == kPtDynamic && !dyn) dyn = &p;
  }
  read_into(prefix_, prefix_end - prefix_.size());
  std::string dynamic;
  if (dyn && read_dynamic(*dyn, dynamic)) parse_dynamic(dynamic);
  // Version strings live in .rodata, inside the read-only segments.
  if (scan_.pending() && !advance_to(scan_end)) scan_.feed({}, true);
  if (scan_.pending()) scan_.feed({}, true);
}

}  // namespace

ElfInfo read_elf(ContentReader& r, const ElfOptions& opt) {
  ElfInfo out;
  Reader(r, opt, out).run();
  return out;
}

}  // namespace trainimg::inspect::elf
