// SPDX-License-Identifier: GPL-3.0-or-later
#include "builder/import/entry_codec.h"

#include "common/error.h"

namespace trainimg::builder::codec {

void put_u32(std::string& s, uint32_t v) {
  char b[4];
  for (int i = 0; i < 4; ++i) b[i] = static_cast<char>((v >> (8 * i)) & 0xff);
  s.append(b, sizeof b);
}

void put_u64(std::string& s, uint64_t v) {
  char b[8];
  for (int i = 0; i < 8; ++i) b[i] = static_cast<char>((v >> (8 * i)) & 0xff);
  s.append(b, sizeof b);
}

void put_str(std::string& s, std::string_view v) {
  put_u32(s, static_cast<uint32_t>(v.size()));
  s.append(v);
}

void put_entry(std::string& s, const inspect::Entry& e) {
  put_u8(s, static_cast<uint8_t>(e.type));
  put_str(s, e.path);
  put_u32(s, e.mode);
  put_u32(s, e.uid);
  put_u32(s, e.gid);
  put_u64(s, e.size);
  put_u64(s, static_cast<uint64_t>(e.mtime));
  put_u32(s, e.rdev_major);
  put_u32(s, e.rdev_minor);
  put_str(s, e.link_target);
  put_u32(s, static_cast<uint32_t>(e.xattrs.size()));
  for (const auto& [k, v] : e.xattrs) {
    put_str(s, k);
    put_str(s, v);
  }
}

void Reader::bad(const std::string& why) const {
  throw Error(name_, std::string(what_) + " at offset " + std::to_string(pos_) + ": " + why);
}

uint32_t Reader::u32() {
  const auto* p = reinterpret_cast<const unsigned char*>(take(4));
  uint32_t v = 0;
  for (int i = 3; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

uint64_t Reader::u64() {
  const auto* p = reinterpret_cast<const unsigned char*>(take(8));
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

std::string_view Reader::str_view() {
  uint32_t n = u32();
  if (n > kMaxString) bad("a string of " + std::to_string(n) + " bytes");
  return {take(n), n};
}

void read_entry(Reader& r, inspect::Entry& e) {
  uint8_t t = r.u8();
  if (t > static_cast<uint8_t>(inspect::EntryType::Socket)) r.bad("entry type " + std::to_string(t));
  e.type = static_cast<inspect::EntryType>(t);
  e.path.assign(r.str_view());
  e.mode = r.u32();
  e.uid = r.u32();
  e.gid = r.u32();
  e.size = r.u64();
  e.mtime = static_cast<int64_t>(r.u64());
  e.rdev_major = r.u32();
  e.rdev_minor = r.u32();
  e.link_target.assign(r.str_view());
  e.xattrs.clear();
  for (uint32_t i = 0, nx = r.u32(); i < nx; ++i) {
    std::string k = r.str();
    e.xattrs[std::move(k)] = r.str();
  }
}

void EntryLog::push(const inspect::Entry& e) {
  constexpr size_t kChunk = 1u << 20, kSlack = 16u << 10;  // most entries fit the slack
  if (chunks_.empty() || chunks_.back().size() >= kChunk) chunks_.emplace_back().reserve(kChunk + kSlack);
  put_entry(chunks_.back(), e);
  ++count_;
}

const std::string& EntryLog::name() {
  static const std::string n = "gathered entries";
  return n;
}

}  // namespace trainimg::builder::codec
