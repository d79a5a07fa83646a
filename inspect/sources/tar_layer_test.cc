// SPDX-License-Identifier: GPL-3.0-or-later
// The zero-copy reads of tar_layer.h: TarReader::read_view (libarchive's
// blocks in place, a sparse member's holes as zeros) must hand out exactly
// what archive_read_data() copies; MappedRange must read a file range as
// pread would, across its mapping windows.
#include "inspect/sources/tar_layer.h"

#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <random>

#include "common/error.h"
#include "inspect/sources/archive_handles.h"
#include "inspect/sources/string_source.h"
#include "inspect/testing/image_builder.h"

namespace trainimg::inspect {
namespace {

using testing::TempDir;

std::string random_bytes(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::string s(n, '\0');
  for (char& c : s) c = static_cast<char>(rng());
  return s;
}

la_ssize_t append_cb(archive*, void* out, const void* buf, size_t n) {
  static_cast<std::string*>(out)->append(static_cast<const char*>(buf), n);
  return static_cast<la_ssize_t>(n);
}

struct Member {
  std::string name, content;
  std::vector<std::pair<int64_t, int64_t>> sparse;  // data regions (offset, length); empty: not sparse
};

// A pax tar (gzip-compressed when `gzip`) of `ms`, written by libarchive:
// a sparse member's data regions are stored, its holes are not.
std::string tar_of(const std::vector<Member>& ms, bool gzip) {
  std::string out;
  ArchiveWriter a = new_archive_writer();
  archive_write_set_format_pax(a.get());
  if (gzip) archive_write_add_filter_gzip(a.get());
  EXPECT_EQ(archive_write_open2(a.get(), &out, nullptr, append_cb, nullptr, nullptr), ARCHIVE_OK);
  for (const Member& m : ms) {
    archive_entry* e = archive_entry_new();
    archive_entry_set_pathname(e, m.name.c_str());
    archive_entry_set_filetype(e, AE_IFREG);
    archive_entry_set_perm(e, 0644);
    archive_entry_set_size(e, static_cast<la_int64_t>(m.content.size()));
    for (auto [off, len] : m.sparse) archive_entry_sparse_add_entry(e, off, len);
    EXPECT_EQ(archive_write_header(a.get(), e), ARCHIVE_OK) << archive_error_string(a.get());
    archive_entry_free(e);
    EXPECT_EQ(archive_write_data(a.get(), m.content.data(), m.content.size()),
              static_cast<la_ssize_t>(m.content.size()));
  }
  EXPECT_EQ(archive_write_close(a.get()), ARCHIVE_OK);
  return out;
}

// A file of `size` bytes, zero except in the data regions (random bytes).
std::string sparse_content(size_t size, const std::vector<std::pair<int64_t, int64_t>>& data, uint32_t seed) {
  std::string s(size, '\0');
  std::mt19937 rng(seed);
  for (auto [off, len] : data)
    for (int64_t i = 0; i < len; ++i) s[static_cast<size_t>(off + i)] = static_cast<char>(rng() % 255 + 1);
  return s;
}

std::vector<Member> members() {
  std::vector<Member> ms;
  ms.push_back({"plain", random_bytes(300000, 4), {}});
  // Holes before, between and after the data.
  std::vector<std::pair<int64_t, int64_t>> d1{{1 << 20, 4096}, {(2 << 20) + 7, 100}};
  ms.push_back({"holes", sparse_content(3 << 20, d1, 1), d1});
  std::vector<std::pair<int64_t, int64_t>> d2{{0, 70000}, {500000, 1}};
  ms.push_back({"leading-data", sparse_content(600000, d2, 2), d2});
  ms.push_back({"empty", "", {}});
  ms.push_back({"after", "the end", {}});
  return ms;
}

// The oracle: what archive_read_data() gives for each member.
std::map<std::string, std::string> by_archive_read_data(const std::string& tar, bool* saw_sparse) {
  std::map<std::string, std::string> out;
  ArchiveReader a = new_archive_reader();
  archive_read_support_filter_all(a.get());
  archive_read_support_format_tar(a.get());
  EXPECT_EQ(archive_read_open_memory(a.get(), tar.data(), tar.size()), ARCHIVE_OK);
  archive_entry* e = nullptr;
  while (archive_read_next_header(a.get(), &e) == ARCHIVE_OK) {
    if (archive_entry_sparse_count(e) > 0) *saw_sparse = true;
    std::string& c = out[archive_entry_pathname(e)];
    char buf[8192];
    la_ssize_t n;
    while ((n = archive_read_data(a.get(), buf, sizeof buf)) > 0) c.append(buf, static_cast<size_t>(n));
    EXPECT_EQ(n, 0);
  }
  return out;
}

TEST(TarReaderView, ViewsAndReadsHandOutWhatArchiveReadDataCopies) {
  for (bool gzip : {false, true}) {
    SCOPED_TRACE(gzip ? "gzip" : "plain tar");
    std::vector<Member> ms = members();
    std::string tar = tar_of(ms, gzip);
    bool saw_sparse = false;
    auto want = by_archive_read_data(tar, &saw_sparse);
    ASSERT_TRUE(saw_sparse) << "libarchive wrote no sparse member: the test would test nothing";
    for (const Member& m : ms) EXPECT_TRUE(want[m.name] == m.content) << m.name << ": the oracle disagrees";

    // read_view with a small scratch (holes come in scratch-sized pieces).
    {
      StringSource src(tar);
      TarReader t(src, "t.tar", "layer x");
      std::map<std::string, std::string> got;
      char scratch[1000];
      while (archive_entry* e = t.next()) {
        std::string& c = got[archive_entry_pathname(e)];
        while (true) {
          std::string_view v = t.read_view(scratch);
          if (v.empty()) break;
          c.append(v);
        }
      }
      EXPECT_TRUE(got == want);
    }
    // read() with odd sizes, and a view and reads mixed in one member.
    {
      StringSource src(tar);
      TarReader t(src, "t.tar", "layer x");
      std::map<std::string, std::string> got;
      std::mt19937 rng(5);
      std::vector<char> buf(70000), scratch(4096);
      while (archive_entry* e = t.next()) {
        std::string& c = got[archive_entry_pathname(e)];
        for (int i = 0;; ++i) {
          if (i % 3 == 2) {
            std::string_view v = t.read_view(scratch);
            if (v.empty()) break;
            c.append(v);
            continue;
          }
          size_t n = t.read(buf.data(), std::uniform_int_distribution<size_t>(1, buf.size())(rng));
          if (n == 0) break;
          c.append(buf.data(), n);
        }
      }
      EXPECT_TRUE(got == want);
    }
    // A member left half read: the next one still starts right.
    {
      StringSource src(tar);
      TarReader t(src, "t.tar", "layer x");
      char scratch[64];
      std::string last;
      while (archive_entry* e = t.next()) {
        last = archive_entry_pathname(e);
        (void)t.read_view(scratch);
      }
      EXPECT_EQ(last, "after");
    }
  }
}

TEST(MappedRangeRead, ReadsTheRangeAcrossWindowsAsPreadWould) {
  TempDir tmp;
  std::string path = tmp / "blob";
  std::string bytes = random_bytes((19 << 20) + 12345, 6);
  testing::write_bytes(path, bytes);
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  ASSERT_TRUE(fd);
  const uint64_t begin = 4097, length = (17 << 20) + 3;  // neither end on a page
  const std::string want = bytes.substr(begin, length);

  {  // views only
    MappedRange r(fd.get(), begin, length, "blob");
    std::string got;
    while (true) {
      std::string_view v = r.read_view({});
      if (v.empty()) break;
      got.append(v);
    }
    EXPECT_TRUE(got == want);
  }
  {  // reads, skips and views mixed; a skip over a whole window
    MappedRange r(fd.get(), begin, length, "blob");
    std::mt19937 rng(3);
    std::string got;
    std::vector<char> buf(3 << 20);
    uint64_t pos = 0;
    for (int i = 0; pos < length; ++i) {
      if (i % 4 == 1) {
        uint64_t n = r.skip(i == 1 ? 9 << 20 : 1000);
        got.append(want, static_cast<size_t>(pos),
                   static_cast<size_t>(n));  // what was skipped, from the oracle
        pos += n;
      } else if (i % 4 == 3) {
        std::string_view v = r.read_view({});
        got.append(v);
        pos += v.size();
      } else {
        size_t n = r.read(buf.data(), std::uniform_int_distribution<size_t>(1, buf.size())(rng));
        ASSERT_GT(n, 0u);
        EXPECT_TRUE(std::string_view(buf.data(), n) ==
                    std::string_view(want).substr(static_cast<size_t>(pos), n))
            << "at " << pos;
        got.append(buf.data(), n);
        pos += n;
      }
    }
    EXPECT_EQ(pos, length);
    EXPECT_EQ(r.read(buf.data(), buf.size()), 0u);
    EXPECT_TRUE(r.read_view({}).empty());
  }
  // A file shorter than the range would fault when mapped: refused up front.
  try {
    MappedRange r(fd.get(), 0, bytes.size() + 1, "blob");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("blob: the file is"));
  }
}

}  // namespace
}  // namespace trainimg::inspect
