// SPDX-License-Identifier: GPL-3.0-or-later
// The block processor fed from a thread of its own. Writer::begin_file,
// write and end_file copy their bytes into a ring and return; the feeder
// thread makes the same libsquashfs calls, in the same order, so the image
// is byte for byte what a direct call would write. What the caller's thread
// saves is the processor's hand-offs to its workers (a broadcast per block,
// a wait when the backlog is full) and its copy into the block: an import's
// reading thread (inflate, tar, merge) was the critical path and spent a
// third of its time there. Internal to sqsh/.
#pragma once

#include <sqfs/predef.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "sqsh/sqsh.h"

namespace trainimg::sqsh {

class DataFeeder {
 public:
  /// Not `threaded`: no thread and no ring; each call is made at once on the
  /// caller's thread (WriterOptions::lean).
  DataFeeder(Writer::Impl& w, bool threaded);
  DataFeeder(const DataFeeder&) = delete;
  DataFeeder& operator=(const DataFeeder&) = delete;
  ~DataFeeder() { abandon(); }

  // Each throws the feeder's first Error, if it met one (one call late at
  // most: an op is checked when it is queued, its own failure at the next).
  /// A file's data, whose inode libsquashfs creates and grows at `*inode`
  /// (which must stay where it is until the data is written).
  void begin(sqfs_inode_generic_t** inode, const std::string& path);
  void write(const void* data, size_t n);
  void end();
  /// Waits until every queued op is done; throws the feeder's Error.
  void drain();
  /// Stops the thread with what is queued left undone (an image being thrown
  /// away). Afterwards file_open() says whether libsquashfs has a file open.
  void abandon();
  bool file_open() const { return proc_in_file_; }

 private:
  enum class Kind : uint8_t { Begin, Data, End };
  struct Op {
    Kind kind = Kind::End;
    uint32_t len = 0;                        // Data: bytes at the ring's read position
    sqfs_inode_generic_t** inode = nullptr;  // Begin
    std::string path;                        // Begin, for messages
  };
  void push(Op op);
  void publish();
  template <class Room>
  void wait_for_room(std::unique_lock<std::mutex>& lock, Room room);
  void rethrow_if_failed();
  void run();
  void apply(Op& op, uint64_t at);
  void append(const char* p, size_t n);
  void check(int rc, const char* action) const;

  Writer::Impl& w_;
  const bool direct_;
  std::vector<char> ring_;
  // The caller's thread only.
  std::vector<Op> batch_;  // ops not handed over yet
  uint64_t batch_bytes_ = 0;
  uint64_t head_ = 0;  // ring bytes written (mod ring size)
  // Shared.
  std::mutex mu_;
  std::condition_variable work_cv_, space_cv_, idle_cv_;
  std::deque<Op> ops_;             // under mu_
  std::atomic<uint64_t> tail_{0};  // ring bytes released by the feeder
  uint64_t unsignalled_ = 0;       // under mu_: bytes handed over since the feeder was last woken
  bool idle_ = false;              // under mu_
  std::atomic<bool> producer_waiting_{false}, stop_{false}, failed_{false};
  std::exception_ptr error_;  // set under mu_ before failed_
  // The feeder thread's own state.
  bool proc_in_file_ = false;
  std::string current_;
  std::thread thread_;
};

}  // namespace trainimg::sqsh
