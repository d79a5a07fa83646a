// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

namespace trainimg {

namespace hash_table_detail {
struct KeySlot {
  uint64_t key = 0;
};
template <typename Value>
struct KeyValueSlot {
  uint64_t key = 0;
  Value value{};
};
}  // namespace hash_table_detail

/// A set of strings (Value = void) or a map from strings to Value, that keeps
/// only a 64-bit hash of each string: one open addressing table (linear
/// probing, a power of two long, at least 1024 slots once used, at most half
/// of them occupied). A slot is the hash alone for a set (8 bytes an entry)
/// and the hash and the value for a map (16 bytes with a uint64_t). Two
/// strings of one hash are one entry (odds about 2^-64 a pair): each user
/// says what that costs it. An erased entry leaves a mark that probing passes
/// over until the next rebuild.
template <typename Value = void>
class StringHashTable {
  using Slot = std::conditional_t<std::is_void_v<Value>, hash_table_detail::KeySlot,
                                  hash_table_detail::KeyValueSlot<Value>>;

 public:
  /// Bytes of one slot, the memory of an entry.
  static constexpr size_t kSlotBytes = sizeof(Slot);

  bool contains(std::string_view s) const { return index_of(key(s)) != kNone; }
  /// Entries present (erased ones do not count).
  size_t size() const { return live_; }

  /// Set: adds `s`; nothing when it is there already.
  void insert(std::string_view s) requires std::is_void_v<Value> { add(key(s)); }

  /// Map: stores `v` for `s`, over the value there when `s` is there already.
  template <typename V = Value>
  requires(!std::is_void_v<V>) void insert(std::string_view s, V v) {
    slots_[add(key(s))].value = std::move(v);
  }

  /// Map: the value stored for `s`, or null. Valid until the next insert.
  template <typename V = Value>
  requires(!std::is_void_v<V>) const V* find(std::string_view s) const {
    const size_t i = index_of(key(s));
    return i == kNone ? nullptr : &slots_[i].value;
  }

  void erase(std::string_view s) {
    if (live_ == 0) return;
    if (size_t i = index_of(key(s)); i != kNone) {
      slots_[i].key = kErased;  // still occupied: probing passes over it
      --live_;
    }
  }

 private:
  static constexpr size_t kNone = SIZE_MAX;
  static constexpr uint64_t kFree = 0, kErased = 1;

  static uint64_t key(std::string_view s) {
    const uint64_t h = std::hash<std::string_view>{}(s);
    return h <= kErased ? h + 2 : h;
  }

  size_t index_of(uint64_t k) const {
    if (live_ == 0) return kNone;
    const size_t mask = slots_.size() - 1;
    for (size_t i = k & mask;; i = (i + 1) & mask) {
      if (slots_[i].key == k) return i;
      if (slots_[i].key == kFree) return kNone;
    }
  }

  // The slot of key `k`, a new one (value-initialised) when it is not there.
  size_t add(uint64_t k) {
    if (size_t i = index_of(k); i != kNone) return i;
    if ((occupied_ + 1) * 2 > slots_.size()) rebuild();
    const size_t i = place(k);
    ++occupied_;
    ++live_;
    return i;
  }

  // The first free slot on `k`'s probe path, now holding `k`.
  size_t place(uint64_t k) {
    const size_t mask = slots_.size() - 1;
    size_t i = k & mask;
    while (slots_[i].key != kFree) i = (i + 1) & mask;
    slots_[i].key = k;
    return i;
  }

  // A table at most half full of live slots, without the erased ones.
  void rebuild() {
    size_t n = std::max<size_t>(1024, slots_.size());
    while ((live_ + 1) * 2 > n) n *= 2;
    std::vector<Slot> old = std::exchange(slots_, std::vector<Slot>(n));
    for (Slot& s : old)
      if (s.key > kErased) slots_[place(s.key)] = std::move(s);
    occupied_ = live_;
  }

  std::vector<Slot> slots_;  // a power of two long
  size_t occupied_ = 0;      // live and erased slots
  size_t live_ = 0;
};

}  // namespace trainimg
