// SPDX-License-Identifier: GPL-3.0-or-later
// InflateAhead: a gzip stream inflated on a thread of its own must hand out
// exactly the stream's bytes (every member), stop at its end leaving what
// follows to the caller's trailing-data check, report corrupt and truncated
// streams with their compressed offset, pass anything else through, and
// keep to --jobs's CPU slots (one slot shared by the reader and the thread).
#include "inspect/sources/inflate_ahead.h"

#include <archive.h>
#include <archive_entry.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <random>

#include "common/cpu_slots.h"
#include "common/error.h"
#include "inspect/sources/archive_handles.h"

namespace trainimg::inspect {
namespace {

// A gzip stream written by libarchive's filter (zlib): not by the library
// under test.
la_ssize_t append_cb(archive*, void* out, const void* buf, size_t n) {
  static_cast<std::string*>(out)->append(static_cast<const char*>(buf), n);
  return static_cast<la_ssize_t>(n);
}

std::string gzip(const std::string& data) {
  std::string out;
  ArchiveWriter a = new_archive_writer();
  archive_write_set_format_raw(a.get());
  archive_write_add_filter_gzip(a.get());
  archive_write_set_bytes_in_last_block(a.get(), 1);
  EXPECT_EQ(archive_write_open(a.get(), &out, nullptr, append_cb, nullptr), ARCHIVE_OK);
  ArchiveEntryPtr e(archive_entry_new());
  archive_entry_set_filetype(e.get(), AE_IFREG);
  EXPECT_EQ(archive_write_header(a.get(), e.get()), ARCHIVE_OK);
  EXPECT_EQ(archive_write_data(a.get(), data.data(), data.size()), static_cast<la_ssize_t>(data.size()));
  EXPECT_EQ(archive_write_close(a.get()), ARCHIVE_OK);
  return out;
}

// Half random, half repetitive: several inflated buffers per input chunk.
std::string sample(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::string s(n, '\0');
  for (size_t i = 0; i < n; ++i)
    s[i] = (i / 4096) % 2 ? static_cast<char>('a' + i % 7) : static_cast<char>(rng());
  return s;
}

// A reader of a string in small pieces that records what it is told.
class Counting : public ContentReader {
 public:
  explicit Counting(std::string s, size_t piece = 1000) : s_(std::move(s)), piece_(piece) {}
  size_t read(char* buf, size_t n) override {
    size_t k = std::min({n, piece_, s_.size() - pos_});
    std::copy_n(s_.data() + pos_, k, buf);
    pos_ += k;
    return k;
  }
  void unread(uint64_t n) override { unread_ += n; }
  size_t pos_ = 0;
  uint64_t unread_ = 0;

 private:
  std::string s_;
  size_t piece_;
};

std::string read_all(ContentReader& r, bool views) {
  std::string out;
  std::vector<char> buf(3000);
  for (;;) {
    if (views) {
      std::string_view v = r.read_view(buf);
      if (v.empty()) break;
      out.append(v);
    } else {
      size_t got = r.read(buf.data(), buf.size());
      if (got == 0) break;
      out.append(buf.data(), got);
    }
  }
  return out;
}

std::string error_of(Counting& in) {
  try {
    InflateAhead a(in, "img", "layer x", 2, 4096);
    read_all(a, true);
    a.finish();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(InflateAhead, HandsOutEveryMemberOfTheStreamThroughSmallBuffers) {
  // Reads of every size: a member may end anywhere in one, and ISA-L holds
  // up to 8 bytes past it in its bit buffer. (Small reads, small members:
  // each read's output goes to the reader before the next read.)
  for (size_t piece : {size_t{1}, size_t{7}, size_t{1000}, size_t{65536}}) {
    const size_t n = piece < 1000 ? 20000 : 700000;
    const std::string a = sample(n, 1), b = sample(n / 2 + 1, 2), c = "tail";
    for (bool views : {true, false}) {
      SCOPED_TRACE(std::to_string(piece) + (views ? " views" : " reads"));
      Counting in(gzip(a) + gzip(b) + gzip("") + gzip(c), piece);
      InflateAhead ahead(in, "img", "layer x", 2, 4096);
      ASSERT_TRUE(ahead.inflating());
      EXPECT_FALSE(ahead.seekable());
      EXPECT_EQ(read_all(ahead, views), a + b + c);
      ahead.finish();
      EXPECT_EQ(in.unread_, 0u);
    }
  }
}

TEST(InflateAhead, WhatFollowsTheStreamIsGivenBackAsUnread) {
  const std::string a = sample(200000, 3), z = gzip(a);
  Counting in(z + std::string(5000, '\0') + "trailing garbage");
  InflateAhead ahead(in, "img", "layer x", 2, 4096);
  EXPECT_EQ(read_all(ahead, true), a);
  ahead.finish();
  EXPECT_EQ(in.pos_ - in.unread_, z.size());  // read ahead past the end, all of it given back
}

TEST(InflateAhead, AReaderThatStopsEarlyGetsTheReadAheadBackAndTheThreadStops) {
  const std::string a = sample(2000000, 4), z = gzip(a);
  Counting in(z);
  InflateAhead ahead(in, "img", "layer x", 3, 4096);
  std::vector<char> buf(100);
  ASSERT_EQ(ahead.read(buf.data(), buf.size()), buf.size());
  EXPECT_EQ(std::string(buf.data(), buf.size()), a.substr(0, 100));
  ahead.finish();  // joins the thread, which waits for a free buffer
  // Counted as used: what the first buffer needed, not what was read ahead
  // of it (how much was depends on timing).
  EXPECT_GT(in.pos_ - in.unread_, 0u);
  EXPECT_LT(in.pos_ - in.unread_, z.size() / 2);
}

TEST(InflateAhead, TruncatedAndCorruptStreamsAreErrorsWithTheirOffset) {
  const std::string z = gzip(sample(400000, 5));
  Counting cut(z.substr(0, z.size() / 2));
  EXPECT_THAT(error_of(cut),
              testing::HasSubstr("img: layer x: gzip: the stream is truncated at compressed offset " +
                                 std::to_string(z.size() / 2)));
  std::string bad = z;
  for (size_t i = z.size() / 3; i < z.size() / 3 + 64; ++i) bad[i] = static_cast<char>(bad[i] ^ 0x5a);
  Counting corrupt(bad);
  EXPECT_THAT(error_of(corrupt), testing::MatchesRegex("img: layer x: gzip: .* at compressed offset [0-9]+"));
  std::string crc = z;
  crc[z.size() - 6] = static_cast<char>(crc[z.size() - 6] ^ 1);  // the trailer's CRC-32
  Counting check(crc);
  EXPECT_THAT(error_of(check), testing::HasSubstr("gzip: incorrect data check"));
}

TEST(InflateAhead, AnythingButGzipPassesThrough) {
  for (std::string s :
       {std::string(), std::string("x"), sample(100000, 6), std::string("\x1f\x8b\x07rest", 7)}) {
    Counting in(s, 1);  // one byte a read: the peek still sees three
    InflateAhead ahead(in, "img", "layer x");
    EXPECT_FALSE(ahead.inflating());
    EXPECT_EQ(read_all(ahead, false), s);
    ahead.finish();
    EXPECT_EQ(in.unread_, 0u);
  }
}

TEST(InflateAhead, OneCpuSlotIsSharedByTheReaderAndTheInflateThread) {
  const std::string a = sample(1500000, 7);
  Counting in(gzip(a), 65536);
  CpuSlots slots(1);
  CpuSlot busy(&slots);  // the reader's: the thread gets it whenever the reader waits
  InflateAhead ahead(in, "img", "layer x", 2, 8192);
  EXPECT_EQ(read_all(ahead, true), a);
  ahead.finish();
  EXPECT_EQ(slots.peak(), 1u);
}

}  // namespace
}  // namespace trainimg::inspect
