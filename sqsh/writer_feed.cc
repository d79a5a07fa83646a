// SPDX-License-Identifier: GPL-3.0-or-later
#include "sqsh/writer_feed.h"

#include <algorithm>
#include <cstring>

#include "sqsh/writer_impl.h"

namespace trainimg::sqsh {

namespace {

constexpr size_t kRing = 4 << 20;    // bytes queued at most
constexpr size_t kPiece = 1 << 20;   // a write is queued in pieces of at most this
constexpr uint64_t kWake = 1 << 20;  // an idle feeder is woken once this much is queued
constexpr size_t kWakeOps = 256;     // … or this many ops (small files)
constexpr size_t kMaxOps = 4096;     // ops queued at most (memory: 500,000 empty files)

}  // namespace

DataFeeder::DataFeeder(Writer::Impl& w) : w_(w), ring_(kRing) {
  thread_ = std::thread([this] { run(); });
}

void DataFeeder::rethrow_if_failed() {
  if (failed_) std::rethrow_exception(error_);
}

void DataFeeder::push(Op op) {
  std::unique_lock<std::mutex> lock(mu_);
  rethrow_if_failed();
  while (ops_.size() >= kMaxOps) {
    wait_for_room(lock);
    rethrow_if_failed();
  }
  unsignalled_ += op.len;
  ops_.push_back(std::move(op));
  // A sleeping feeder is woken for a batch, not for every op: a wake-up is a
  // system call here and a context switch there.
  if (idle_ && (unsignalled_ >= kWake || ops_.size() >= kWakeOps)) {
    unsignalled_ = 0;
    idle_ = false;
    work_cv_.notify_one();
  }
}

// The ring or the op queue is full: wake the feeder and wait for it.
void DataFeeder::wait_for_room(std::unique_lock<std::mutex>& lock) {
  producer_waiting_ = true;
  idle_ = false;
  unsignalled_ = 0;
  work_cv_.notify_one();
  space_cv_.wait(lock);
  producer_waiting_ = false;
}

void DataFeeder::begin(WNode* node, const std::string& path) {
  Op op;
  op.kind = Kind::Begin;
  op.node = node;
  op.path = path;
  push(std::move(op));
}

void DataFeeder::end() {
  push(Op{});
}

void DataFeeder::write(const void* data, size_t n) {
  const char* p = static_cast<const char*>(data);
  while (n > 0) {
    size_t piece = std::min(n, kPiece);
    uint64_t at;
    {
      std::unique_lock<std::mutex> lock(mu_);
      rethrow_if_failed();
      while (kRing - (head_ - tail_) < piece) {
        wait_for_room(lock);
        rethrow_if_failed();
      }
      at = head_;
      head_ += piece;  // reserved: the feeder reads only what ops_ names
    }
    size_t off = static_cast<size_t>(at % kRing), first = std::min(piece, kRing - off);
    std::memcpy(ring_.data() + off, p, first);
    std::memcpy(ring_.data(), p + first, piece - first);
    Op op;
    op.kind = Kind::Data;
    op.len = static_cast<uint32_t>(piece);
    push(std::move(op));
    p += piece;
    n -= piece;
  }
}

void DataFeeder::drain() {
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
    stop_ = abandon_ = true;
    work_cv_.notify_one();
  }
  thread_.join();
}

void DataFeeder::run() {
  uint64_t at = 0;  // ring position of the next Data op's bytes
  for (;;) {
    Op op;
    {
      std::unique_lock<std::mutex> lock(mu_);
      while (ops_.empty() && !stop_) {
        idle_ = true;
        idle_cv_.notify_all();
        work_cv_.wait(lock);
      }
      if (stop_) return;
      idle_ = false;
      op = std::move(ops_.front());
      ops_.pop_front();
      if (failed_) {  // after an error the rest is only released
        if (op.kind == Kind::Data) tail_ += op.len;
        if (producer_waiting_) space_cv_.notify_one();
        continue;
      }
      if (producer_waiting_ && op.kind != Kind::Data) space_cv_.notify_one();  // a slot in ops_
    }
    try {
      apply(op, at);
    } catch (...) {
      std::lock_guard<std::mutex> lock(mu_);
      error_ = std::current_exception();
      failed_ = true;
      space_cv_.notify_one();
      idle_cv_.notify_all();
    }
    if (op.kind == Kind::Data) {
      at += op.len;
      std::lock_guard<std::mutex> lock(mu_);
      tail_ += op.len;
      if (producer_waiting_) space_cv_.notify_one();
    }
  }
}

void DataFeeder::apply(Op& op, uint64_t at) {
  sqfs_block_processor_t* proc = w_.proc.get();
  auto check = [&](int rc, const char* action) {  // the message is built only on failure
    if (rc < 0) w_.check_rc(rc, action + current_);
  };
  switch (op.kind) {
    case Kind::Begin:
      current_ = std::move(op.path);
      check(sqfs_block_processor_begin_file(proc, &op.node->file_inode, nullptr, w_.file_flags),
            "starting the data of ");
      proc_in_file_ = true;
      break;
    case Kind::Data: {
      size_t off = static_cast<size_t>(at % kRing), first = std::min<size_t>(op.len, kRing - off);
      check(sqfs_block_processor_append(proc, ring_.data() + off, first), "writing the data of ");
      if (first < op.len)
        check(sqfs_block_processor_append(proc, ring_.data(), op.len - first), "writing the data of ");
      break;
    }
    case Kind::End:
      proc_in_file_ = false;
      check(sqfs_block_processor_end_file(proc), "writing the data of ");
      break;
  }
}

}  // namespace trainimg::sqsh
