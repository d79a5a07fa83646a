// SPDX-License-Identifier: GPL-3.0-or-later
// sqfs_file_t over a POSIX file descriptor (pread/pwrite), so that the
// writer can write to the caller's AtomicFile fd and errors keep their errno
// (ENOSPC, EIO) for the message. Internal to sqsh/.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>

#include "common/fd.h"
#include "sqsh/handles.h"

namespace trainimg::sqsh {

/// Wraps `fd`. With `write_behind`, a writable file writes on a thread of
/// its own (write_at() queues up to 8 MiB and returns; reads and truncates
/// see what is queued): call fd_file_flush() before anything else reads the
/// fd. Without it, each write_at() is a pwrite on the caller's thread (no
/// thread, no ring: for many writers side by side).
/// With `own`, the fd is closed when the file is destroyed;
/// otherwise the caller keeps ownership and must outlive the object.
/// Read-only files report reads past the end as SQFS_ERROR_OUT_OF_BOUNDS and
/// can be copied (sqfs_copy dups the fd); writable ones cannot.
/// Returns null (errno set) when fstat fails.
FilePtr make_fd_file(int fd, bool read_only, bool own, bool write_behind = true, bool write_back = false);

/// Waits until every queued write is in the file and a sync-ahead in flight
/// (an fdatasync of a large output, on a thread of its own, while it is
/// written) has ended: 0, or SQFS_ERROR_IO when a write or a sync failed
/// (fd_file_errno() says why). 0 at once for read-only files. Call it before
/// the fsync that publishes the file: that fsync cannot see an error the
/// sync-ahead has already reported.
int fd_file_flush(sqfs_file_t* f);

/// Appends bytes [src_off, src_off + len) of `src_fd` at offset `dst_off`
/// of a writable file made above (after what is queued), in the kernel
/// where it can (copy_file_range: no copy through user space, shared
/// extents on file systems with reflinks), else through a buffer. 0, or
/// SQFS_ERROR_IO (fd_file_errno() says why; a short source gives EIO).
int fd_file_copy_in(sqfs_file_t* f, int src_fd, uint64_t src_off, uint64_t len, uint64_t dst_off);

/// Makes the file at least `size` bytes long as get_size() sees it, without
/// writing: what is written next goes after, while fd_file_copy_in() fills
/// the gap (on another thread: copy_in and the other calls may overlap).
void fd_file_reserve(sqfs_file_t* f, uint64_t size);

/// Tests only: sync ahead every `bytes` handed to write-back (256 MiB
/// unless set), and how many sync-aheads have ended well.
void fd_file_sync_every(sqfs_file_t* f, uint64_t bytes);
uint64_t fd_file_syncs(sqfs_file_t* f);

/// Tests only: while held, queued writes stay queued (keep them under 8 MiB
/// in all, or the writer waits for the thread).
void fd_file_hold_writes(sqfs_file_t* f, bool hold);

/// Starts the write-back of byte ranges of files on a thread of its own
/// ("ti-writeback"), never on the thread that wrote them. A file made above
/// without `write_behind` but with `write_back` (a segment that its layer's
/// reader writes) offers every 32 MiB it writes to the process's starter.
/// sync_file_range(SYNC_FILE_RANGE_WRITE) waits while the device's request
/// queue is full: on the lent 16-core machine 11 of 16 layer readers sat in
/// that wait (state D) for a second, twice in one cold import
/// (docs/import.md, "Layers side by side"). Here only this thread waits; a
/// range offered while `capacity` ranges are queued is refused, and the
/// writer offers it again with what it writes next (the kernel's own
/// write-back and the fsync before the publish write it in any case).
class WriteBackStarter {
 public:
  explicit WriteBackStarter(size_t capacity);
  ~WriteBackStarter();  // ends the thread; what is still queued is dropped
  WriteBackStarter(const WriteBackStarter&) = delete;
  WriteBackStarter& operator=(const WriteBackStarter&) = delete;
  /// Queues [offset, offset + len) of `fd` (a duplicate of it: the caller
  /// may close its own); false when the queue is full or `fd` cannot be
  /// duplicated. Never waits for the device.
  bool offer(int fd, uint64_t offset, uint64_t len);
  /// Tests: waits until the queue is empty and no range is being started;
  /// the ranges started so far.
  uint64_t wait_idle();
  /// Tests: while held, queued ranges stay queued.
  void hold(bool on);
  /// The process's starter (64 ranges: 2 GiB of 32 MiB pieces).
  static WriteBackStarter& process();

 private:
  struct Range {
    UniqueFd fd;
    uint64_t offset, len;
  };
  void run();
  const size_t capacity_;
  std::mutex mu_;
  std::condition_variable work_, idle_;
  std::deque<Range> queue_;
  bool busy_ = false, stop_ = false, held_ = false;
  uint64_t started_ = 0;
  std::thread thread_;
};

/// errno of the last failed read/write/truncate on a file made above (0 if none).
int fd_file_errno(const sqfs_file_t* f);

/// "ACTION: TEXT" for a libsquashfs code, plus the errno of `f` (which may be
/// null) for an I/O error: the message both the reader and the writer throw.
std::string rc_message(int rc, std::string_view action, const sqfs_file_t* f);

/// Reads bytes [lo, hi) of a read-only file made above into memory once, so
/// later reads inside that range cost no system call (the meta data tables,
/// which a walk reads block by block in no file order). Does nothing and
/// returns false when the range is empty, larger than max_bytes, already
/// preloaded, or cannot be read (reads then fail where they would anyway).
bool fd_file_preload(sqfs_file_t* f, uint64_t lo, uint64_t hi, uint64_t max_bytes);

}  // namespace trainimg::sqsh
