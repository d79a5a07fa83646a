// SPDX-License-Identifier: GPL-3.0-or-later
#include "common/hash_table.h"

#include <gtest/gtest.h>

#include <string>

namespace trainimg {

TEST(StringHashTable, SlotIsTheHashAloneForASetAndHashAndValueForAMap) {
  EXPECT_EQ(StringHashTable<>::kSlotBytes, 8u);
  EXPECT_EQ(StringHashTable<uint64_t>::kSlotBytes, 16u);
}

TEST(StringHashTable, EmptyTableHoldsNothing) {
  StringHashTable<> set;
  EXPECT_FALSE(set.contains("/a"));
  set.erase("/a");  // nothing to erase
  EXPECT_EQ(set.size(), 0u);
  const StringHashTable<uint64_t> map;
  EXPECT_EQ(map.find("/a"), nullptr);
}

TEST(StringHashTable, SetInsertsOnceAndErases) {
  StringHashTable<> set;
  set.insert("/usr/lib/a");
  set.insert("/usr/lib/a");
  set.insert("/usr/lib/b");
  EXPECT_EQ(set.size(), 2u);
  EXPECT_TRUE(set.contains("/usr/lib/a"));
  EXPECT_FALSE(set.contains("/usr/lib/c"));
  set.erase("/usr/lib/a");
  EXPECT_FALSE(set.contains("/usr/lib/a"));
  EXPECT_TRUE(set.contains("/usr/lib/b"));
  EXPECT_EQ(set.size(), 1u);
  set.insert("/usr/lib/a");  // back after an erase
  EXPECT_TRUE(set.contains("/usr/lib/a"));
  EXPECT_EQ(set.size(), 2u);
}

TEST(StringHashTable, MapStoresTheLastValue) {
  StringHashTable<uint64_t> map;
  map.insert("/etc/x", 7);
  map.insert("/etc/y", 0);
  map.insert("/etc/x", 9);
  ASSERT_NE(map.find("/etc/x"), nullptr);
  EXPECT_EQ(*map.find("/etc/x"), 9u);
  ASSERT_NE(map.find("/etc/y"), nullptr);
  EXPECT_EQ(*map.find("/etc/y"), 0u);
  EXPECT_EQ(map.find("/etc/z"), nullptr);
  EXPECT_EQ(map.size(), 2u);
}

// Past the first 1024 slots and through many erasures: the rebuilds keep
// every live entry and drop the erased ones.
TEST(StringHashTable, KeepsEntriesThroughGrowthAndErasure) {
  StringHashTable<> set;
  StringHashTable<uint64_t> map;
  const int n = 20000;
  for (int i = 0; i < n; ++i) {
    set.insert("/f/" + std::to_string(i));
    map.insert("/f/" + std::to_string(i), static_cast<uint64_t>(i) * 3);
  }
  for (int i = 0; i < n; i += 2) set.erase("/f/" + std::to_string(i));
  for (int i = 0; i < n; i += 3) set.insert("/g/" + std::to_string(i));  // reuses no erased slot
  EXPECT_EQ(set.size(), static_cast<size_t>(n / 2 + (n + 2) / 3));
  EXPECT_EQ(map.size(), static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) {
    const std::string p = "/f/" + std::to_string(i);
    EXPECT_EQ(set.contains(p), i % 2 == 1) << p;
    EXPECT_EQ(set.contains("/g/" + std::to_string(i)), i % 3 == 0) << i;
    const uint64_t* v = map.find(p);
    ASSERT_NE(v, nullptr) << p;
    EXPECT_EQ(*v, static_cast<uint64_t>(i) * 3);
  }
}

// Inserting and erasing many times over a table of a few entries: rebuilds
// clear the erase marks, so a probe still meets a free slot.
TEST(StringHashTable, ChurnDoesNotFillTheTableWithErasures) {
  StringHashTable<> set;
  for (int i = 0; i < 100000; ++i) {
    const std::string p = "/tmp/" + std::to_string(i);
    set.insert(p);
    set.erase(p);
  }
  EXPECT_EQ(set.size(), 0u);
  EXPECT_FALSE(set.contains("/tmp/5"));
  set.insert("/tmp/5");
  EXPECT_TRUE(set.contains("/tmp/5"));
}

}  // namespace trainimg
