// SPDX-License-Identifier: GPL-3.0-or-later
// `--jobs N` as a hard cap: at most N threads inflate, parse or compress at
// once, however many threads exist (a layer reader per layer read at once,
// compressor threads per segment, the writer's own). Like make's jobserver:
// a thread holds a slot only while it computes, and gives it back for every
// wait, so a thread waiting on another never keeps the slot that one needs.
//
//   CpuSlots slots(jobs);          // one per import
//   { CpuSlot busy(&slots); ... }  // a thread's work; no-op for null slots
//   { CpuSlotFreed wait; ... }     // a wait inside that work (a full queue,
//                                  // bytes still downloading)
// A CpuSlot taken on a thread that already holds one (compression inline on a
// reader thread) is the same slot.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <mutex>

namespace trainimg {

class CpuSlots {
 public:
  explicit CpuSlots(unsigned n) : free_(n ? n : 1), total_(n ? n : 1) {}
  CpuSlots(const CpuSlots&) = delete;
  CpuSlots& operator=(const CpuSlots&) = delete;
  unsigned total() const { return total_; }
  /// The most slots ever held at once (tests, the --progress json summary).
  unsigned peak() const;

 private:
  friend class CpuSlot;
  friend class CpuSlotFreed;
  void acquire();
  void release();
  mutable std::mutex mu_;
  std::condition_variable cv_;
  unsigned free_, total_, peak_ = 0;
};

/// Holds a slot of `slots` (none when null) for its lifetime, on this thread.
class CpuSlot {
 public:
  explicit CpuSlot(CpuSlots* slots);
  ~CpuSlot();
  CpuSlot(const CpuSlot&) = delete;
  CpuSlot& operator=(const CpuSlot&) = delete;

 private:
  CpuSlots* slots_;  // null: nothing taken (none, or the thread's own already held)
};

/// The slots this thread holds one of, null while it holds none: a helper
/// thread doing part of this thread's work takes its slots from the same.
CpuSlots* cpu_slots_held();

/// Gives back the slot this thread holds (if any) for its lifetime: wrap
/// every wait on another thread's work.
class CpuSlotFreed {
 public:
  CpuSlotFreed();
  ~CpuSlotFreed();
  CpuSlotFreed(const CpuSlotFreed&) = delete;
  CpuSlotFreed& operator=(const CpuSlotFreed&) = delete;

 private:
  CpuSlots* slots_;
};

/// Runs `wait(lock)`, a wait under `lock` on another thread's work, with this
/// thread's slot given back. The slot is given back and taken again without
/// `lock` held: taking it may block, and the thread that would free one may
/// need `lock` first. `lock` is held on return, as on entry.
template <class Wait>
void wait_with_slot_freed(std::unique_lock<std::mutex>& lock, Wait wait) {
  lock.unlock();
  {
    CpuSlotFreed freed;
    lock.lock();
    wait(lock);
    lock.unlock();
  }
  lock.lock();
}

}  // namespace trainimg
