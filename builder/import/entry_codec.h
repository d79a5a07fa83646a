// SPDX-License-Identifier: GPL-3.0-or-later
// The byte form of an inspect::Entry, its layer id left out: integers little
// endian, strings as a u32 length and their bytes. The reuse index stores its
// entries so (reuse_index.cc); a layer read beside others keeps what it
// gathered so until the merge takes it (segments.cc): about 50 bytes and the
// path an entry, where an inspect::Entry is 180 and a heap path.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "inspect/sources/source.h"

namespace trainimg::builder::codec {

inline void put_u8(std::string& s, uint8_t v) {
  s.push_back(static_cast<char>(v));
}
void put_u32(std::string& s, uint32_t v);
void put_u64(std::string& s, uint64_t v);
void put_str(std::string& s, std::string_view v);
void put_entry(std::string& s, const inspect::Entry& e);

/// Bounds-checked reading of what the put_ functions wrote; what fails
/// throws Error(name, "<what> at offset N: ...").
class Reader {
 public:
  static constexpr uint32_t kMaxString = 1u << 20;
  Reader(std::string_view data, const std::string& name, std::string_view what)
      : d_(data), name_(name), what_(what) {}
  [[noreturn]] void bad(const std::string& why) const;
  const char* take(size_t n) {
    const char* p = peek(n);
    pos_ += n;
    return p;
  }
  uint8_t u8() { return static_cast<uint8_t>(*take(1)); }
  uint8_t peek_u8() { return static_cast<uint8_t>(*peek(1)); }
  uint32_t u32();
  uint64_t u64();
  std::string_view str_view();
  std::string str() { return std::string(str_view()); }
  bool done() const { return pos_ == d_.size(); }
  size_t pos() const { return pos_; }

 private:
  const char* peek(size_t n) const {
    if (n > d_.size() - pos_) bad("it ends early");
    return d_.data() + pos_;
  }
  std::string_view d_;
  const std::string& name_;
  std::string_view what_;
  size_t pos_ = 0;
};

/// The next entry, over `e` (its layer id kept; its strings' room reused,
/// so that a replay of many entries allocates little). Checks bounds and the
/// type, not the path.
void read_entry(Reader& r, inspect::Entry& e);

/// Entries kept as bytes in chunks of about 1 MiB, read back in order once,
/// each chunk freed as the reading passes it. A layer read beside others
/// holds its entries so until the merge takes them: 500,000 entries took
/// 84 MB as records with heap paths in a vector that doubled, 40 MB so.
class EntryLog {
 public:
  void push(const inspect::Entry& e);
  size_t size() const { return count_; }
  /// Each entry into `e` (its layer id kept), then to `f`; empty after.
  template <class F>
  void drain(inspect::Entry& e, F&& f) {
    for (std::string& chunk : chunks_) {
      Reader r(chunk, name(), "damaged");
      while (!r.done()) {
        read_entry(r, e);
        f(static_cast<const inspect::Entry&>(e));
      }
      std::string().swap(chunk);
    }
    chunks_.clear();
    count_ = 0;
  }

 private:
  static const std::string& name();
  std::vector<std::string> chunks_;
  size_t count_ = 0;
};

}  // namespace trainimg::builder::codec
