// SPDX-License-Identifier: GPL-3.0-or-later
#include "common/cpu_slots.h"

#include <algorithm>

namespace trainimg {
namespace {
// The slots this thread holds one of; null while it holds none.
thread_local CpuSlots* t_held = nullptr;
}  // namespace

CpuSlots* cpu_slots_held() {
  return t_held;
}

unsigned CpuSlots::peak() const {
  std::lock_guard<std::mutex> l(mu_);
  return peak_;
}

void CpuSlots::acquire() {
  std::unique_lock<std::mutex> l(mu_);
  cv_.wait(l, [&] { return free_ > 0; });
  --free_;
  peak_ = std::max(peak_, total_ - free_);
}

void CpuSlots::release() {
  {
    std::lock_guard<std::mutex> l(mu_);
    ++free_;
  }
  cv_.notify_one();
}

CpuSlot::CpuSlot(CpuSlots* slots) : slots_(slots && t_held == nullptr ? slots : nullptr) {
  if (!slots_) return;
  slots_->acquire();
  t_held = slots_;
}

CpuSlot::~CpuSlot() {
  if (!slots_) return;
  t_held = nullptr;
  slots_->release();
}

CpuSlotFreed::CpuSlotFreed() : slots_(t_held) {
  if (!slots_) return;
  t_held = nullptr;
  slots_->release();
}

CpuSlotFreed::~CpuSlotFreed() {
  if (!slots_) return;
  slots_->acquire();
  t_held = slots_;
}

}  // namespace trainimg
