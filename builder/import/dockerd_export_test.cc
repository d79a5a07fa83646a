// SPDX-License-Identifier: GPL-3.0-or-later
// The image's `created` as the import's reference time (the export itself is
// tested against the real daemon in import_test.cc).
#include "builder/import/dockerd_export.h"

#include <gtest/gtest.h>
#include <sched.h>
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

cpu_set_t thread_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  EXPECT_EQ(::sched_getaffinity(0, sizeof set, &set), 0);
  return set;
}

// The thread that yields runs at nice +5 (at most 19) on one CPU fewer than
// it may use (the first one is left to the daemon; nothing is given up with a
// single CPU), and so does a thread it starts afterwards (the compressors, the
// read-ahead); the guard's end gives the CPUs back, not the nice value; the
// thread that started it is untouched.
TEST(DaemonYield, LowersTheCallingThreadAndWhatItStartsAfterwards) {
  const int before = thread_nice();
  const cpu_set_t cpus = thread_cpus();
  const int ncpus = CPU_COUNT(&cpus);
  int yielded = 0, child = 0, left = -1, after = 0, after_cpus = 0;
  cpu_set_t during, child_cpus;
  std::thread t([&] {
    {
      DaemonYield y;
      left = y.cpus_left_to_daemon();
      yielded = thread_nice();
      during = thread_cpus();
      std::thread c([&] {
        child = thread_nice();
        child_cpus = thread_cpus();
      });
      c.join();
    }
    after = thread_nice();
    cpu_set_t a = thread_cpus();
    after_cpus = CPU_COUNT(&a);
  });
  t.join();
  EXPECT_EQ(yielded, std::min(19, before + kDaemonYieldNice));
  EXPECT_EQ(child, yielded);
  EXPECT_EQ(after, yielded);
  EXPECT_EQ(left, ncpus >= 2 ? 1 : 0);
  EXPECT_EQ(CPU_COUNT(&during), ncpus - left);
  EXPECT_TRUE(CPU_EQUAL(&child_cpus, &during));
  if (left == 1) {
    int first = 0;
    while (!CPU_ISSET(first, &cpus)) ++first;
    EXPECT_FALSE(CPU_ISSET(first, &during));
  }
  EXPECT_EQ(after_cpus, ncpus);
  EXPECT_EQ(thread_nice(), before);
  cpu_set_t mine = thread_cpus();
  EXPECT_TRUE(CPU_EQUAL(&mine, &cpus));
}

}  // namespace
}  // namespace trainimg::builder
