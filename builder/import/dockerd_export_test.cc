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
#include <condition_variable>
#include <mutex>
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
  for (const char* bad :
       {"", "2026-12-03", "2026-12-03T07:37:42", "2026-12-03 07:37:42Z", "2026-13-03T07:37:42Z",
        "2023-02-29T00:00:00Z", "2026-12-03T24:00:00Z", "2026-12-03T07:60:00Z", "2026-12-03T07:37:42.Z",
        "2026-12-03T07:37:42Zjunk", "2026-12-03T07:37:42+0200", "2026-12-03T07:37:42+24:00",
        "26-12-03T07:37:42Z", "2026-12-03T07:37:4xZ"})
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

int cpus_of(pid_t tid) {
  cpu_set_t set;
  CPU_ZERO(&set);
  EXPECT_EQ(::sched_getaffinity(tid, sizeof set, &set), 0);
  return CPU_COUNT(&set);
}

// The thread that makes a DaemonYield runs at nice +5 (at most 19), and so
// does a thread it starts afterwards (the compressors, the read-ahead); the
// thread that started it keeps its nice value, which the guard's end does
// not take back.
TEST(DaemonYield, LowersTheNiceValueOfTheCallingThreadAndWhatItStartsAfterwards) {
  const int before = thread_nice();
  int yielded = 0, child = 0, after = 0;
  std::thread t([&] {
    {
      DaemonYield y;
      yielded = thread_nice();
      std::thread c([&] { child = thread_nice(); });
      c.join();
    }
    after = thread_nice();
  });
  t.join();
  EXPECT_EQ(yielded, std::min(19, before + kDaemonYieldNice));
  EXPECT_EQ(child, yielded);
  EXPECT_EQ(after, yielded);
  EXPECT_EQ(thread_nice(), before);
}

// pace() narrows every thread of the process (those started before the
// guard too) to all CPUs but the first when the read-ahead is at most a
// quarter full, widens them at three quarters or when the stream ends, and
// leaves them between; the guard's end widens them; without a guard, or
// with a single CPU, nothing changes.
TEST(DaemonYield, PacesEveryThreadsCpusByHowFullTheReadAheadIs) {
  const cpu_set_t cpus = thread_cpus();
  const int n = CPU_COUNT(&cpus);
  const int narrow = n >= 2 ? n - 1 : n;
  std::mutex mu;
  std::condition_variable cv;
  bool quit = false;
  pid_t other_tid = 0;
  std::thread other([&] {  // started before the guard
    std::unique_lock<std::mutex> l(mu);
    other_tid = ::gettid();
    cv.notify_all();
    cv.wait(l, [&] { return quit; });
  });
  {
    std::unique_lock<std::mutex> l(mu);
    cv.wait(l, [&] { return other_tid != 0; });
  }
  DaemonYield::pace(0, 32);  // no guard: nothing
  EXPECT_EQ(cpus_of(0), n);
  std::thread t([&] {
    DaemonYield y;
    EXPECT_FALSE(y.narrowed());
    EXPECT_EQ(cpus_of(0), n);  // nothing narrowed before the first pace()
    DaemonYield::pace(8, 32);
    EXPECT_EQ(y.narrowed(), n >= 2);
    EXPECT_EQ(cpus_of(0), narrow);
    EXPECT_EQ(cpus_of(other_tid), narrow);
    if (n >= 2) {
      cpu_set_t now = thread_cpus();
      int first = 0;
      while (!CPU_ISSET(first, &cpus)) ++first;
      EXPECT_FALSE(CPU_ISSET(first, &now));
    }
    DaemonYield::pace(23, 32);  // between: unchanged
    EXPECT_EQ(cpus_of(other_tid), narrow);
    DaemonYield::pace(24, 32);
    EXPECT_FALSE(y.narrowed());
    EXPECT_EQ(cpus_of(other_tid), n);
    DaemonYield::pace(9, 32);  // between: unchanged
    EXPECT_EQ(cpus_of(0), n);
    DaemonYield::pace(1, 32);
    EXPECT_EQ(cpus_of(other_tid), narrow);
    DaemonYield::stream_ended();
    EXPECT_FALSE(y.narrowed());
    EXPECT_EQ(cpus_of(other_tid), n);
    DaemonYield::pace(0, 32);
    EXPECT_EQ(cpus_of(0), narrow);
  });  // the guard ends narrowed
  t.join();
  EXPECT_EQ(cpus_of(0), n);
  EXPECT_EQ(cpus_of(other_tid), n);
  DaemonYield::pace(0, 32);  // no guard any more: nothing
  EXPECT_EQ(cpus_of(other_tid), n);
  {
    std::lock_guard<std::mutex> l(mu);
    quit = true;
  }
  cv.notify_all();
  other.join();
}

}  // namespace
}  // namespace trainimg::builder
