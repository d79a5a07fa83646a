// SPDX-License-Identifier: GPL-3.0-or-later
#include "common/cpu_slots.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <thread>
#include <vector>

namespace trainimg {
namespace {

// Eight threads, three slots: never more than three at work at once, and
// three at some point (each holds its slot for a while).
TEST(CpuSlots, NoMoreThreadsAtWorkThanSlots) {
  CpuSlots slots(3);
  std::atomic<int> busy{0}, most{0};
  std::vector<std::thread> ts;
  for (int t = 0; t < 8; ++t)
    ts.emplace_back([&] {
      for (int i = 0; i < 20; ++i) {
        CpuSlot s(&slots);
        int now = ++busy;
        for (int m = most.load(); now > m && !most.compare_exchange_weak(m, now);) {
        }
        std::this_thread::sleep_for(std::chrono::microseconds(200));
        --busy;
      }
    });
  for (auto& t : ts) t.join();
  EXPECT_LE(most.load(), 3);
  EXPECT_EQ(slots.peak(), 3u);
  EXPECT_EQ(slots.total(), 3u);
}

// A thread that holds a slot and compresses inline takes no second one:
// with one slot this would otherwise wait forever.
TEST(CpuSlots, ASlotTakenAgainOnTheSameThreadIsTheSameSlot) {
  CpuSlots slots(1);
  CpuSlot outer(&slots);
  { CpuSlot inner(&slots); }
  EXPECT_EQ(slots.peak(), 1u);
}

// A reader holding the only slot waits for a compressor that needs one: the
// wait gives it back, and the reader has it again afterwards.
TEST(CpuSlots, AWaitGivesTheSlotBackAndTakesItAgain) {
  CpuSlots slots(1);
  CpuSlot reader(&slots);
  std::promise<void> compressed;
  std::thread compressor([&] {
    CpuSlot s(&slots);
    compressed.set_value();
  });
  {
    CpuSlotFreed wait;
    EXPECT_EQ(compressed.get_future().wait_for(std::chrono::seconds(20)), std::future_status::ready);
  }
  compressor.join();
  // The reader holds the slot again: another thread cannot get one now.
  std::atomic<bool> got{false};
  std::thread other([&] {
    CpuSlot s(&slots);
    got = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_FALSE(got.load());
  {
    CpuSlotFreed wait;
    other.join();
  }
  EXPECT_TRUE(got.load());
}

}  // namespace
}  // namespace trainimg
