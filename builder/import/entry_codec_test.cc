// SPDX-License-Identifier: GPL-3.0-or-later
// The byte form of entries (entry_codec.h): what goes in comes out, field
// for field, across chunks; what is cut short is refused with its offset.
#include "builder/import/entry_codec.h"

#include <gtest/gtest.h>

#include <vector>

#include "common/error.h"

namespace trainimg::builder::codec {
namespace {

using inspect::Entry;
using inspect::EntryType;

Entry make(EntryType t, std::string path, uint32_t n) {
  Entry e;
  e.type = t;
  e.path = std::move(path);
  e.mode = 0755 + n % 7;
  e.uid = 1000 + n;
  e.gid = 2000 + 3 * n;
  e.size = t == EntryType::File ? (uint64_t{1} << 33) + n : 0;
  e.mtime = -5 + static_cast<int64_t>(n) * 1000003;
  if (t == EntryType::CharDev || t == EntryType::BlockDev) {
    e.rdev_major = 4095 - n % 100;
    e.rdev_minor = 1048575 - n;
  }
  if (t == EntryType::Symlink) e.link_target = "../target/" + std::to_string(n);
  if (t == EntryType::Hardlink) e.link_target = "/usr/bin/a" + std::to_string(n);
  if (n % 5 == 0) {
    e.xattrs["security.capability"] = std::string("\x01\x00\x00\x02\0\0", 6);
    e.xattrs["user.n"] = std::to_string(n);
  }
  return e;
}

void expect_same(const Entry& a, const Entry& b) {
  EXPECT_EQ(a.path, b.path);
  EXPECT_EQ(a.type, b.type);
  EXPECT_EQ(a.mode, b.mode);
  EXPECT_EQ(a.uid, b.uid);
  EXPECT_EQ(a.gid, b.gid);
  EXPECT_EQ(a.size, b.size);
  EXPECT_EQ(a.mtime, b.mtime);
  EXPECT_EQ(a.rdev_major, b.rdev_major);
  EXPECT_EQ(a.rdev_minor, b.rdev_minor);
  EXPECT_EQ(a.link_target, b.link_target);
  EXPECT_EQ(a.xattrs, b.xattrs);
}

TEST(EntryLog, GivesBackEveryEntryInOrderAcrossChunksAndKeepsTheLayerId) {
  const EntryType kinds[] = {EntryType::File, EntryType::Dir,     EntryType::Symlink,  EntryType::Hardlink,
                             EntryType::Fifo, EntryType::CharDev, EntryType::BlockDev, EntryType::Socket};
  std::vector<Entry> in;
  for (uint32_t n = 0; n < 40000; ++n)  // about 3 MB: several chunks
    in.push_back(make(kinds[n % 8],
                      "/usr/lib/python3/dist-packages/p" + std::to_string(n / 400) + "/f" + std::to_string(n),
                      n));
  in.push_back(make(EntryType::File, "/" + std::string(300000, 'x'), 7));  // past a chunk's room
  in.push_back(make(EntryType::Dir, "/", 8));
  EntryLog log;
  for (const Entry& e : in) log.push(e);
  EXPECT_EQ(log.size(), in.size());
  Entry e;
  e.layer = "sha256:abc";
  size_t i = 0;
  log.drain(e, [&](const Entry& got) {
    ASSERT_LT(i, in.size());
    expect_same(got, in[i]);
    EXPECT_EQ(got.layer, "sha256:abc");
    ++i;
  });
  EXPECT_EQ(i, in.size());
  EXPECT_EQ(log.size(), 0u);
  size_t again = 0;
  log.drain(e, [&](const Entry&) { ++again; });
  EXPECT_EQ(again, 0u);
}

TEST(EntryCodec, AnEntryCutShortIsRefusedWithItsOffset) {
  std::string s;
  put_entry(s, make(EntryType::Symlink, "/a/b", 3));
  for (size_t cut : {size_t{0}, size_t{1}, size_t{7}, s.size() - 1}) {
    const std::string name = "idx";
    Reader r(std::string_view(s).substr(0, cut), name, "damaged thing");
    Entry e;
    try {
      read_entry(r, e);
      FAIL() << "cut at " << cut << " was read";
    } catch (const Error& err) {
      EXPECT_NE(std::string(err.what()).find("damaged thing at offset"), std::string::npos) << err.what();
      EXPECT_NE(std::string(err.what()).find("it ends early"), std::string::npos) << err.what();
    }
  }
  std::string bad_type = s;
  bad_type[0] = 9;
  const std::string name = "idx";
  Reader r(bad_type, name, "damaged thing");
  Entry e;
  EXPECT_THROW(read_entry(r, e), Error);
}

}  // namespace
}  // namespace trainimg::builder::codec
