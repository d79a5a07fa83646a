// SPDX-License-Identifier: GPL-3.0-or-later
#include "sqsh/writer_feed.h"

#include <algorithm>
#include <cstring>

#include "common/cpu_slots.h"
#include "common/cpus.h"
#include "sqsh/writer_impl.h"

namespace trainimg::sqsh {

namespace {

constexpr size_t kRing = 4 << 20;    // bytes queued at most
constexpr size_t kPiece = 1 << 20;   // a write is queued in pieces of at most this
constexpr uint64_t kWake = 1 << 20;  // an idle feeder is woken once this much is queued
constexpr size_t kWakeOps = 256;     // … or this many ops (small files)
constexpr size_t kMaxOps = 4096;     // ops queued at most (memory: 500,000 empty files)
constexpr size_t kBatch = 32;        // ops handed to the feeder at once

}  // namespace

DataFeeder::DataFeeder(Writer::Impl& w, bool threaded) : w_(w), direct_(!threaded) {
  if (direct_) return;
  ring_.resize(kRing);
  thread_ = std::thread([this] {
    name_this_thread("ti-feed");
    run();
  });
}

void DataFeeder::rethrow_if_failed() {
  if (failed_) std::rethrow_exception(error_);
}

void DataFeeder::push(Op op) {
  if (failed_) {
    std::lock_guard<std::mutex> lock(mu_);
    rethrow_if_failed();
  }
  batch_bytes_ += op.len;
  batch_.push_back(std::move(op));
  if (batch_.size() >= kBatch) publish();
}

// Hands the ops queued on this thread to the feeder: one lock for a batch,
// not one per op (both threads taking the lock per op made them wake each
// other up through the mutex).
void DataFeeder::publish() {
  if (batch_.empty()) return;
  std::unique_lock<std::mutex> lock(mu_);
  wait_for_room(lock, [&] { return ops_.size() + batch_.size() <= kMaxOps; });
  for (Op& op : batch_) ops_.push_back(std::move(op));
  batch_.clear();
  unsignalled_ += batch_bytes_;
  batch_bytes_ = 0;
  // A sleeping feeder is woken for a batch, not for every op: a wake-up is a
  // system call here and a context switch there.
  if (idle_ && (unsignalled_ >= kWake || ops_.size() >= kWakeOps)) {
    unsignalled_ = 0;
    idle_ = false;
    work_cv_.notify_one();
  }
}

// Waits, with the feeder woken, until `room()` (the ring or the op queue has
// room); throws the feeder's error. producer_waiting_ is set before room() is
// checked: a release the check did not see is followed by a notify. Only
// this thread takes room, so room() stays true once it is.
//
// The feeder may need a CPU slot to make room (libsquashfs compresses inline
// with one worker; common/cpu_slots.h): a caller that holds one gives it
// back while it waits, and takes it again without mu_ held. The writer's
// calls that never wait keep it: no hand-over per file.
template <class Room>
void DataFeeder::wait_for_room(std::unique_lock<std::mutex>& lock, Room room) {
  producer_waiting_ = true;
  if (!room() && !failed_) {
    wait_with_slot_freed(lock, [&](std::unique_lock<std::mutex>& l) {
      while (!room() && !failed_) {
        idle_ = false;
        unsignalled_ = 0;
        work_cv_.notify_one();
        space_cv_.wait(l);
      }
    });
  }
  producer_waiting_ = false;
  rethrow_if_failed();
}

void DataFeeder::begin(sqfs_inode_generic_t** inode, const std::string& path) {
  Op op;
  op.kind = Kind::Begin;
  op.inode = inode;
  op.path = path;
  if (direct_) {
    CpuSlotFreed freed;  // libsquashfs may wait for its compressors
    apply(op, 0);
  } else {
    push(std::move(op));
  }
}

void DataFeeder::end() {
  Op op;
  if (direct_) {
    CpuSlotFreed freed;
    apply(op, 0);
  } else {
    push(op);
  }
}

void DataFeeder::write(const void* data, size_t n) {
  const char* p = static_cast<const char*>(data);
  if (direct_) {
    CpuSlotFreed freed;
    append(p, n);
    return;
  }
  while (n > 0) {
    size_t piece = std::min(n, kPiece);
    if (kRing - (head_ - tail_) < piece) {
      publish();  // the feeder must see the ops whose bytes hold the ring
      std::unique_lock<std::mutex> lock(mu_);
      wait_for_room(lock, [&] { return kRing - (head_ - tail_) >= piece; });
    }
    size_t off = static_cast<size_t>(head_ % kRing), first = std::min(piece, kRing - off);
    std::memcpy(ring_.data() + off, p, first);
    std::memcpy(ring_.data(), p + first, piece - first);
    head_ += piece;  // the feeder reads only what the ops name
    Op op;
    op.kind = Kind::Data;
    op.len = static_cast<uint32_t>(piece);
    push(std::move(op));
    p += piece;
    n -= piece;
  }
}

void DataFeeder::drain() {
  if (direct_) return;
  CpuSlotFreed freed;
  publish();
  std::unique_lock<std::mutex> lock(mu_);
  idle_cv_.wait(lock, [&] {
    if (!ops_.empty() && idle_) {  // what is queued is below the batch size: wake it
      idle_ = false;
      unsignalled_ = 0;
      work_cv_.notify_one();
    }
    return (ops_.empty() && idle_) || failed_;
  });
  rethrow_if_failed();
}

void DataFeeder::abandon() {
  if (!thread_.joinable()) return;
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
    work_cv_.notify_one();
  }
  thread_.join();
}

void DataFeeder::run() {
  uint64_t at = 0;  // ring position of the next Data op's bytes
  std::deque<Op> work;
  for (;;) {
    {
      std::unique_lock<std::mutex> lock(mu_);
      while (ops_.empty() && !stop_) {
        idle_ = true;
        idle_cv_.notify_all();
        work_cv_.wait(lock);
      }
      if (stop_) return;
      idle_ = false;
      work.swap(ops_);                                // all that is queued, in one go
      if (producer_waiting_) space_cv_.notify_one();  // room in ops_
    }
    for (Op& op : work) {
      if (stop_) return;  // abandoned: the rest is not wanted
      if (!failed_) {     // after an error the rest is only released
        try {
          apply(op, at);
        } catch (...) {
          std::lock_guard<std::mutex> lock(mu_);
          error_ = std::current_exception();
          failed_ = true;
          space_cv_.notify_one();
          idle_cv_.notify_all();
        }
      }
      if (op.kind == Kind::Data) {
        at += op.len;
        tail_ += op.len;
        // Under the lock: a producer that saw the ring full either sees this
        // release when it checks again, or is already waiting to be told.
        if (producer_waiting_) {
          std::lock_guard<std::mutex> lock(mu_);
          space_cv_.notify_one();
        }
      }
    }
    work.clear();
  }
}

void DataFeeder::check(int rc, const char* action) const {
  if (rc < 0) w_.check_rc(rc, action + current_);  // the message is built only on failure
}

void DataFeeder::append(const char* p, size_t n) {
  check(sqfs_block_processor_append(w_.proc.get(), p, n), "writing the data of ");
}

void DataFeeder::apply(Op& op, uint64_t at) {
  sqfs_block_processor_t* proc = w_.proc.get();
  switch (op.kind) {
    case Kind::Begin:
      current_ = std::move(op.path);
      check(sqfs_block_processor_begin_file(proc, op.inode, nullptr, w_.file_flags), "starting the data of ");
      proc_in_file_ = true;
      break;
    case Kind::Data: {
      size_t off = static_cast<size_t>(at % kRing), first = std::min<size_t>(op.len, kRing - off);
      append(ring_.data() + off, first);
      if (first < op.len) append(ring_.data(), op.len - first);
      break;
    }
    case Kind::End:
      proc_in_file_ = false;
      check(sqfs_block_processor_end_file(proc), "writing the data of ");
      break;
  }
}

}  // namespace trainimg::sqsh
