// SPDX-License-Identifier: GPL-3.0-or-later
// The image's `created` as the import's reference time (the export itself is
// tested against the real daemon in import_test.cc).
#include "builder/import/dockerd_export.h"

#include <gtest/gtest.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <thread>

namespace trainimg::builder {
namespace {

TEST(ParseRfc3339, DockersFormatsGiveSecondsSince1970WithTheFractionDropped) {
  // `date -u -d 2026-12-03T07:37:42Z +%s`
  EXPECT_EQ(parse_rfc3339("2026-12-03T07:37:42.724169957Z"), 1796283462);
  EXPECT_EQ(parse_rfc3339("2026-12-03T07:37:42Z"), 1796283462);
  EXPECT_EQ(parse_rfc3339("2023-11-14T22:13:20.999999999Z"), 1700000000);
  EXPECT_EQ(parse_rfc3339("1970-01-01T00:00:00Z"), 0);
  // Offsets: the same instant.
  EXPECT_EQ(parse_rfc3339("2023-11-15T00:13:20+02:00"), 1700000000);
  EXPECT_EQ(parse_rfc3339("2023-11-14T17:43:20.5-04:30"), 1700000000);
  // Leap days and the last second of a year.
  EXPECT_EQ(parse_rfc3339("2024-02-29T00:00:00Z"), 1709164800);
  EXPECT_EQ(parse_rfc3339("1999-12-31T23:59:59Z"), 946684799);
  // Docker's zero time (an image without `created`): before 1970.
  EXPECT_EQ(parse_rfc3339("0001-01-01T00:00:00Z"), -62135596800);
}

TEST(ParseRfc3339, AnythingElseIsRefused) {
  for (const char* bad : {"", "2026-12-03", "2026-12-03T07:37:42", "2026-12-03 07:37:42Z", "2026-13-03T07:37:42Z",
                          "2023-02-29T00:00:00Z", "2026-12-03T24:00:00Z", "2026-12-03T07:60:00Z",
                          "2026-12-03T07:37:42.Z", "2026-12-03T07:37:42Zjunk", "2026-12-03T07:37:42+0200",
                          "2026-12-03T07:37:42+24:00", "26-12-03T07:37:42Z", "2026-12-03T07:37:4xZ"})
    EXPECT_EQ(parse_rfc3339(bad), std::nullopt) << bad;
}

TEST(ImageCreated, AbsentUnparsableOrBefore1970IsZero) {
  EXPECT_EQ(image_created("2023-11-14T22:13:20Z"), 1700000000);
  EXPECT_EQ(image_created("0001-01-01T00:00:00Z"), 0);
  EXPECT_EQ(image_created("1969-12-31T23:59:59Z"), 0);
  EXPECT_EQ(image_created(""), 0);
  EXPECT_EQ(image_created("yesterday"), 0);
}

}  // namespace
}  // namespace trainimg::builder

namespace trainimg::builder {
namespace {

int thread_nice() {
  errno = 0;
  return ::getpriority(PRIO_PROCESS, static_cast<id_t>(::gettid()));
}

// The thread that yields runs at nice +5 (at most 19), and so does a thread
// it starts afterwards (the compressors, the read-ahead); the thread that
// started it is untouched.
TEST(YieldCpuToDaemon, LowersTheCallingThreadAndWhatItStartsAfterwards) {
  const int before = thread_nice();
  int yielded = 0, child = 0;
  std::thread t([&] {
    yield_cpu_to_daemon();
    yielded = thread_nice();
    std::thread c([&] { child = thread_nice(); });
    c.join();
  });
  t.join();
  EXPECT_EQ(yielded, std::min(19, before + kDaemonYieldNice));
  EXPECT_EQ(child, yielded);
  EXPECT_EQ(thread_nice(), before);
}

}  // namespace
}  // namespace trainimg::builder
