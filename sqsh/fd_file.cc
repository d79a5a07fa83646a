// SPDX-License-Identifier: GPL-3.0-or-later
#include "sqsh/fd_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <thread>
#include <vector>

#include "common/cpus.h"
#include "common/fd.h"

namespace trainimg::sqsh {
namespace {

// Writes every byte of [p, p + size) at `offset`, retrying short writes and
// EINTR; -1 with errno set on failure.
int pwrite_all(int fd, const char* p, size_t size, uint64_t offset) {
  while (size > 0) {
    ssize_t n = ::pwrite(fd, p, size, static_cast<off_t>(offset));
    if (n < 0) {
      if (errno == EINTR) continue;
      return -1;
    }
    p += n;
    offset += static_cast<uint64_t>(n);
    size -= static_cast<size_t>(n);
  }
  return 0;
}

constexpr uint64_t kWriteBack = 32u << 20;  // bytes written between two write-back starts

// Starts the write-back of [handed, written) once 32 MiB are pending, not
// waiting for it, and moves `handed` to `written`; returns the bytes handed
// over (0 when not due, or when the file system cannot: a pipe, a tmpfs;
// then the fsync, or a copy that shares these blocks, writes them).
uint64_t start_write_back(int fd, uint64_t& handed, uint64_t written) {
  if (written < handed + kWriteBack) return 0;
  const uint64_t n = written - handed;
  const bool ok =
      ::sync_file_range(fd, static_cast<off_t>(handed), static_cast<off_t>(n), SYNC_FILE_RANGE_WRITE) == 0;
  handed = written;
  return ok ? n : 0;
}

// The writer's system calls on a thread of their own. The import's main
// thread runs libsquashfs's back end (it writes every finished block) and is
// the critical path of an import; copying the output into the page cache
// was the largest part of its time (one warm docker:// import, perf, on a
// loaded 2-core VM: 79% of the samples on the main thread, 42% of all in
// copy_folio_from_iter_atomic under pwrite). write_at() now copies into a
// ring of kRing bytes and returns; the thread writes in order, coalesced up
// to 1 MiB, and starts the write-back of every 32 MiB (write-behind: the
// fsync before the publish finds little left to write). Outputs are
// byte-identical to writing in place.
//
// Sync-ahead: write-back only moves the bytes to the device; a device with a
// volatile cache (a VM's virtual disk, most SSDs) still has to make them
// durable at the fsync, and that cost grows with what was written since the
// last flush (this VM: 0.6 s for 900 MiB written, 0.07 s for 100 MiB). So
// once 256 MiB more are in write-back, a second thread fdatasyncs
// the file while the writer goes on, and the publish's fsync finds only the
// tail left. flush() waits for a sync in flight and reports its error: an
// error that one fdatasync has reported is not reported again on the same
// open file, so it must not be lost before the publish.
//
// Consistency for libsquashfs, which reads back what it wrote (to compare
// blocks and fragments it deduplicates) and truncates (to drop a duplicate
// file's blocks): a read preads and then applies every queued write and
// truncate to what it read, in queue order, under the lock that the thread
// needs to retire an op, so no byte can be in neither place. An error of the
// thread (ENOSPC, EIO) fails the next call and flush(), with its errno.
class WriteBehind {
 public:
  explicit WriteBehind(int fd, uint64_t size)
      : fd_(fd), written_(size), handed_(size), ring_(new char[kRing]) {
    thread_ = std::thread([this] {
      name_this_thread("ti-write");
      run();
    });
    try {
      syncer_ = std::thread([this] {
        name_this_thread("ti-sync");
        sync_run();
      });
    } catch (...) {
      stop();
      throw;
    }
  }
  ~WriteBehind() {
    stop();
    syncer_.join();
  }

  // 0, or the errno of the write that failed (now or earlier). A write
  // larger than one op (none of libsquashfs's is) is queued in pieces.
  int write(uint64_t offset, const char* p, size_t n) {
    for (size_t done = 0; done < n;) {
      const size_t piece = std::min<size_t>(n - done, kMaxOp);
      if (int e = queue_write(offset + done, p + done, piece)) return e;
      done += piece;
    }
    return 0;
  }

  // 0 or the errno of the pread (or of an earlier write).
  int read(uint64_t offset, char* p, size_t n) {
    std::lock_guard<std::mutex> l(mu_);
    if (err_) return err_;
    const ssize_t got = pread_full(fd_, p, n, offset);
    if (got < 0) return errno;
    // Past the file's end the rest is still queued (or a hole).
    std::memset(p + got, 0, n - static_cast<size_t>(got));
    // What is queued, applied in order: a write lays its bytes over the
    // range; a truncate zeroes what lies past its size (bytes the file may
    // still hold, which a later write past the end leaves as a hole).
    for (const Op& op : ops_) {
      if (op.truncate) {
        if (op.size < offset + n) {
          const uint64_t from = std::max(op.size, offset);
          std::memset(p + (from - offset), 0, offset + n - from);
        }
        continue;
      }
      const uint64_t lo = std::max(offset, op.offset), hi = std::min(offset + n, op.offset + op.len);
      if (lo < hi) copy_out(op.ring + (lo - op.offset), p + (lo - offset), hi - lo);
    }
    return 0;
  }

  int truncate(uint64_t size) {
    std::unique_lock<std::mutex> l(mu_);
    if (err_) return err_;
    ops_.push_back(Op{0, head_, 0, true, size});
    l.unlock();
    work_.notify_one();
    return 0;
  }

  // Tests: while held, the thread takes no op (what is queued stays queued).
  void hold(bool on) {
    {
      std::lock_guard<std::mutex> l(mu_);
      held_ = on;
    }
    work_.notify_all();
  }

  // Waits until everything queued is written; 0 or the errno of a failure.
  // With `durable_too`, also for the sync-ahead wanted or in flight.
  int flush(bool durable_too) {
    std::unique_lock<std::mutex> l(mu_);
    idle_.wait(l, [&] { return (ops_.empty() && !(durable_too && (syncing_ || sync_wanted_))) || err_; });
    return err_;
  }

  void sync_every(uint64_t bytes) {
    std::lock_guard<std::mutex> l(mu_);
    sync_every_ = bytes;
  }
  uint64_t syncs() {
    std::lock_guard<std::mutex> l(mu_);
    return syncs_;
  }

  // `n` more bytes of the file were handed to write-back (by the thread, or
  // by a copy in the kernel on the caller's thread).
  void handed(uint64_t n) {
    {
      std::lock_guard<std::mutex> l(mu_);
      since_sync_ += n;
      if (since_sync_ < sync_every_ || no_sync_) return;
      since_sync_ = 0;
      sync_wanted_ = true;
    }
    sync_.notify_one();
  }

 private:
  static constexpr uint64_t kRing = 8u << 20;   // bytes queued at most (the memory this costs)
  static constexpr uint64_t kMaxOp = 1u << 20;  // one pwrite at most
  struct Op {
    uint64_t offset;  // in the file
    uint64_t ring;    // where the bytes start, as a count of bytes ever queued
    uint64_t len;     // bytes it holds in the ring
    bool truncate;
    uint64_t size;  // truncate: the new size
  };

  int queue_write(uint64_t offset, const char* p, size_t n) {
    std::unique_lock<std::mutex> l(mu_);
    if (err_) return err_;
    space_.wait(l, [&] { return kRing - (head_ - tail_) >= n || err_; });
    if (err_) return err_;
    copy_in(head_, p, n);
    Op* last = ops_.empty() ? nullptr : &ops_.back();
    if (last && !last->truncate && !(busy_ && ops_.size() == 1) && last->offset + last->len == offset &&
        last->ring + last->len == head_ && last->len + n <= kMaxOp) {
      last->len += n;
    } else {
      ops_.push_back(Op{offset, head_, n, false, 0});
    }
    head_ += n;
    l.unlock();
    work_.notify_one();
    return 0;
  }

  void copy_in(uint64_t at, const char* p, size_t n) {
    const uint64_t pos = at % kRing, first = std::min<uint64_t>(n, kRing - pos);
    std::memcpy(ring_.get() + pos, p, first);
    std::memcpy(ring_.get(), p + first, n - first);
  }
  void copy_out(uint64_t at, char* p, size_t n) const {
    const uint64_t pos = at % kRing, first = std::min<uint64_t>(n, kRing - pos);
    std::memcpy(p, ring_.get() + pos, first);
    std::memcpy(p + first, ring_.get(), n - first);
  }

  // One op, outside the lock: the ring bytes of a queued op are not reused
  // before it is retired.
  int execute(const Op& op) {
    if (op.truncate) {
      if (::ftruncate(fd_, static_cast<off_t>(op.size)) != 0) return errno;
      written_ = op.size;
      handed_ = std::min(handed_, op.size);
      return 0;
    }
    // The op's bytes, in one piece or two where they wrap around the ring.
    const uint64_t pos = op.ring % kRing, first = std::min<uint64_t>(op.len, kRing - pos);
    if (pwrite_all(fd_, ring_.get() + pos, first, op.offset) != 0 ||
        pwrite_all(fd_, ring_.get(), op.len - first, op.offset + first) != 0)
      return errno;
    const uint64_t off = op.offset + op.len;
    written_ = std::max(written_, off);
    if (const uint64_t n = start_write_back(fd_, handed_, written_)) handed(n);
    return 0;
  }

  void stop() {
    {
      std::lock_guard<std::mutex> l(mu_);
      stop_ = true;
      ops_.clear();
    }
    work_.notify_all();
    sync_.notify_all();
    thread_.join();
  }

  void sync_run() {
    std::unique_lock<std::mutex> l(mu_);
    for (;;) {
      sync_.wait(l, [&] { return stop_ || sync_wanted_; });
      if (stop_) return;
      sync_wanted_ = false;
      syncing_ = true;
      l.unlock();
      const int e = ::fdatasync(fd_) == 0 ? 0 : errno;
      l.lock();
      syncing_ = false;
      if (e == 0) syncs_++;
      if (e == EINVAL || e == EROFS || e == ENOSYS || e == EOPNOTSUPP) {
        no_sync_ = true;  // a pipe or a special file: the publish's fsync says what it must
      } else if (e != 0 && e != EINTR && !err_) {
        err_ = e;
        space_.notify_all();
      }
      idle_.notify_all();
    }
  }

  void run() {
    std::unique_lock<std::mutex> l(mu_);
    for (;;) {
      work_.wait(l, [&] { return stop_ || (!ops_.empty() && !held_); });
      if (stop_) return;
      busy_ = true;
      const Op op = ops_.front();
      l.unlock();
      const int e = execute(op);
      l.lock();
      busy_ = false;
      if (ops_.empty()) continue;  // cleared by the destructor
      if (e != 0) {
        err_ = e;
        ops_.clear();
        tail_ = head_;
      } else {
        tail_ += ops_.front().len;
        ops_.pop_front();
      }
      if (ops_.empty()) idle_.notify_all();
      space_.notify_all();
    }
  }

  const int fd_;
  uint64_t written_, handed_;  // the thread's: end of what is written; [0, handed_) queued for write-back
  std::unique_ptr<char[]> ring_;
  std::mutex mu_;
  std::condition_variable work_, space_, idle_, sync_;
  std::deque<Op> ops_;
  uint64_t head_ = 0, tail_ = 0;  // bytes ever queued / retired
  uint64_t since_sync_ = 0;       // bytes handed to write-back since the last sync was wanted
  uint64_t sync_every_ = 256u << 20, syncs_ = 0;
  bool busy_ = false, stop_ = false, held_ = false;
  bool sync_wanted_ = false, syncing_ = false, no_sync_ = false;
  int err_ = 0;
  std::thread thread_, syncer_;
};

// sqfs_file_t must be the first member: libsquashfs only sees the base.
struct FdFile {
  sqfs_file_t base;
  int fd;
  bool read_only;
  bool own;
  std::atomic<uint64_t> size;           // fd_file_copy_in may run on another thread
  std::unique_ptr<WriteBehind> behind;  // writable files
  bool write_back;                      // no `behind`: start_write_back() as it writes
  uint64_t handed;                      // ... up to here
  std::atomic<int> last_errno;
  // fd_file_preload(): bytes [window_lo, window_lo + window_size) in memory.
  char* window;
  uint64_t window_lo, window_size;
};
static_assert(std::is_standard_layout_v<sqfs_file_t>);

FdFile* self(sqfs_file_t* f) {
  return reinterpret_cast<FdFile*>(f);
}
const FdFile* self(const sqfs_file_t* f) {
  return reinterpret_cast<const FdFile*>(f);
}

void grow(FdFile* f, uint64_t size) {
  uint64_t cur = f->size.load();
  while (cur < size && !f->size.compare_exchange_weak(cur, size)) {
  }
}

int fd_read_at(sqfs_file_t* base, sqfs_u64 offset, void* buffer, size_t size) {
  FdFile* f = self(base);
  if (const uint64_t end = f->size; offset > end || size > end - offset) return SQFS_ERROR_OUT_OF_BOUNDS;
  if (f->window && offset >= f->window_lo && size <= f->window_size &&
      offset - f->window_lo <= f->window_size - size) {
    std::memcpy(buffer, f->window + (offset - f->window_lo), size);
    return 0;
  }
  auto* p = static_cast<char*>(buffer);
  if (f->behind) {
    if (int e = f->behind->read(offset, p, size)) {
      f->last_errno = e;
      return SQFS_ERROR_IO;
    }
    return 0;
  }
  const ssize_t got = pread_full(f->fd, p, size, offset);
  if (got < 0) {
    f->last_errno = errno;
    return SQFS_ERROR_IO;
  }
  if (static_cast<size_t>(got) < size) return SQFS_ERROR_OUT_OF_BOUNDS;  // file shrank under us
  return 0;
}

// A file without a write-behind thread hands its write-back to the
// process's starter (WriteBackStarter, fd_file.h) once kWriteBack bytes are
// pending; a refused range stays pending and goes with the next offer.
void offer_write_back(FdFile* f, uint64_t written) {
  if (written < f->handed + kWriteBack) return;
  if (WriteBackStarter::process().offer(f->fd, f->handed, written - f->handed)) f->handed = written;
}

int fd_write_at(sqfs_file_t* base, sqfs_u64 offset, const void* buffer, size_t size) {
  FdFile* f = self(base);
  if (f->read_only) return SQFS_ERROR_IO;
  const auto* p = static_cast<const char*>(buffer);
  int e = 0;
  if (f->behind)
    e = f->behind->write(offset, p, size);
  else if (pwrite_all(f->fd, p, size, offset) != 0)
    e = errno;
  if (e != 0) {
    f->last_errno = e;
    return SQFS_ERROR_IO;
  }
  grow(f, offset + size);
  if (f->write_back) offer_write_back(f, offset + size);
  return 0;
}

sqfs_u64 fd_get_size(const sqfs_file_t* base) {
  return self(base)->size;
}

int fd_truncate(sqfs_file_t* base, sqfs_u64 size) {
  FdFile* f = self(base);
  if (f->read_only) return SQFS_ERROR_IO;
  int e = 0;
  if (f->behind)
    e = f->behind->truncate(size);
  else if (::ftruncate(f->fd, static_cast<off_t>(size)) != 0)
    e = errno;
  if (e != 0) {
    f->last_errno = e;
    return SQFS_ERROR_IO;
  }
  f->size = size;
  return 0;
}

void fd_destroy(sqfs_object_t* base) {
  FdFile* f = reinterpret_cast<FdFile*>(base);
  f->behind.reset();  // joins the thread before the fd may close
  if (f->own) ::close(f->fd);
  std::free(f->window);
  delete f;
}

FdFile* make(int fd, bool read_only, bool own, uint64_t size, bool write_behind, bool write_back = false);

sqfs_object_t* fd_copy(const sqfs_object_t* base) {
  const FdFile* f = reinterpret_cast<const FdFile*>(base);
  if (!f->read_only) return nullptr;
  int fd = ::fcntl(f->fd, F_DUPFD_CLOEXEC, 0);
  if (fd < 0) return nullptr;
  FdFile* c = make(fd, true, true, f->size, /*write_behind=*/false);  // a reader writes nothing
  if (!c) ::close(fd);
  return reinterpret_cast<sqfs_object_t*>(c);
}

FdFile* make(int fd, bool read_only, bool own, uint64_t size, bool write_behind, bool write_back) {
  auto* f = new (std::nothrow) FdFile{};
  if (!f) return nullptr;
  f->base.base.destroy = fd_destroy;
  f->base.base.copy = fd_copy;
  f->base.read_at = fd_read_at;
  f->base.write_at = fd_write_at;
  f->base.get_size = fd_get_size;
  f->base.truncate = fd_truncate;
  f->fd = fd;
  f->read_only = read_only;
  f->own = own;
  f->size = size;
  f->write_back = write_back && !read_only && !write_behind;
  f->handed = size;
  f->last_errno = 0;
  if (!read_only && write_behind) {
    try {
      f->behind = std::make_unique<WriteBehind>(fd, size);
    } catch (...) {  // no memory or no thread
      delete f;
      return nullptr;
    }
  }
  return f;
}

}  // namespace

WriteBackStarter::WriteBackStarter(size_t capacity) : capacity_(capacity ? capacity : 1) {
  thread_ = std::thread([this] {
    name_this_thread("ti-writeback");
    run();
  });
}

WriteBackStarter::~WriteBackStarter() {
  {
    std::lock_guard<std::mutex> l(mu_);
    stop_ = true;
    queue_.clear();
  }
  work_.notify_all();
  thread_.join();
}

WriteBackStarter& WriteBackStarter::process() {
  static WriteBackStarter starter(64);
  return starter;
}

bool WriteBackStarter::offer(int fd, uint64_t offset, uint64_t len) {
  UniqueFd dup(::fcntl(fd, F_DUPFD_CLOEXEC, 0));  // one per 32 MiB written: cheap
  if (!dup) return false;
  {
    std::lock_guard<std::mutex> l(mu_);
    if (stop_ || queue_.size() >= capacity_) return false;
    queue_.push_back(Range{std::move(dup), offset, len});
  }
  work_.notify_one();
  return true;
}

void WriteBackStarter::hold(bool on) {
  {
    std::lock_guard<std::mutex> l(mu_);
    held_ = on;
  }
  work_.notify_all();
}

uint64_t WriteBackStarter::wait_idle() {
  std::unique_lock<std::mutex> l(mu_);
  idle_.wait(l, [&] { return queue_.empty() && !busy_; });
  return started_;
}

void WriteBackStarter::run() {
  std::unique_lock<std::mutex> l(mu_);
  for (;;) {
    work_.wait(l, [&] { return stop_ || (!queue_.empty() && !held_); });
    if (stop_) return;
    Range r = std::move(queue_.front());
    queue_.pop_front();
    busy_ = true;
    l.unlock();
    // Only a hint: its error (EIO, ENOSPC found later) is the fsync's to report.
    (void)::sync_file_range(r.fd.get(), static_cast<off_t>(r.offset), static_cast<off_t>(r.len),
                            SYNC_FILE_RANGE_WRITE);
    r.fd.reset();
    l.lock();
    busy_ = false;
    ++started_;
    if (queue_.empty()) idle_.notify_all();
  }
}

FilePtr make_fd_file(int fd, bool read_only, bool own, bool write_behind, bool write_back) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) return nullptr;
  FdFile* f = make(fd, read_only, own, static_cast<uint64_t>(st.st_size), write_behind, write_back);
  if (!f) {
    errno = ENOMEM;
    return nullptr;
  }
  return FilePtr(&f->base);
}

int fd_file_errno(const sqfs_file_t* f) {
  return self(f)->last_errno;
}

std::string rc_message(int rc, std::string_view action, const sqfs_file_t* f) {
  std::string msg = std::string(action) + ": " + std::string(error_text(rc));
  if (int e = rc == SQFS_ERROR_IO && f ? fd_file_errno(f) : 0; e != 0)
    msg += std::string(" (") + std::strerror(e) + ")";
  return msg;
}

int fd_file_flush(sqfs_file_t* base) {
  FdFile* f = self(base);
  if (!f->behind) return 0;
  if (int e = f->behind->flush(/*durable_too=*/true)) {
    f->last_errno = e;
    return SQFS_ERROR_IO;
  }
  return 0;
}

int fd_file_copy_in(sqfs_file_t* base, int src_fd, uint64_t src_off, uint64_t len, uint64_t dst_off) {
  FdFile* f = self(base);
  if (f->read_only) return SQFS_ERROR_UNSUPPORTED;
  if (f->behind) {
    if (int e = f->behind->flush(/*durable_too=*/false)) {
      f->last_errno = e;
      return SQFS_ERROR_IO;
    }
  }
  auto fail = [&](int e) {
    f->last_errno = e;
    return SQFS_ERROR_IO;
  };
  bool kernel = true;
  std::vector<char> buf;
  // Where the two offsets agree modulo 4 KiB, the whole 4 KiB blocks go in
  // calls of their own, aligned on both sides: a file system with reflinks
  // (XFS, btrfs) shares only whole blocks and copies a call that starts or
  // ends inside one in full; the bytes before the first and after the last
  // whole block are copied.
  constexpr uint64_t kBlock = 4096;
  const bool congruent = src_off % kBlock == dst_off % kBlock;
  for (uint64_t done = 0; done < len;) {
    uint64_t n_want = std::min<uint64_t>(len - done, 64u << 20);
    if (congruent) {
      if (const uint64_t mis = (src_off + done) % kBlock; mis != 0)
        n_want = std::min(n_want, kBlock - mis);  // up to the first whole block
      else if (n_want >= kBlock)
        n_want -= n_want % kBlock;  // whole blocks
    }
    const size_t want = static_cast<size_t>(n_want);
    if (kernel) {
      loff_t in = static_cast<loff_t>(src_off + done), out = static_cast<loff_t>(dst_off + done);
      ssize_t n = ::copy_file_range(src_fd, &in, f->fd, &out, want, 0);
      if (n > 0) {
        // Write-behind for the copied pages too (a file system that shared
        // the extents has none dirty): the disk works while the caller goes
        // on, instead of in the last fsync.
        if (f->behind &&
            ::sync_file_range(f->fd, static_cast<off_t>(dst_off + done), n, SYNC_FILE_RANGE_WRITE) == 0)
          f->behind->handed(static_cast<uint64_t>(n));
        done += static_cast<uint64_t>(n);
        continue;
      }
      if (n == 0) return fail(EIO);  // the source ended early
      if (errno == EINTR) continue;
      if (errno != EXDEV && errno != EINVAL && errno != ENOSYS && errno != EOPNOTSUPP && errno != EPERM)
        return fail(errno);
      kernel = false;  // another file system or kernel: through user space
      buf.resize(1u << 20);
    }
    const size_t piece = std::min(want, buf.size());
    ssize_t got = pread_full(src_fd, buf.data(), piece, src_off + done);
    if (got < 0) return fail(errno);
    if (static_cast<size_t>(got) < piece) return fail(EIO);
    if (pwrite_all(f->fd, buf.data(), piece, dst_off + done) != 0) return fail(errno);
    done += piece;
  }
  grow(f, dst_off + len);
  return 0;
}

void fd_file_reserve(sqfs_file_t* base, uint64_t size) {
  grow(self(base), size);
}

void fd_file_sync_every(sqfs_file_t* base, uint64_t bytes) {
  FdFile* f = self(base);
  if (f->behind) f->behind->sync_every(bytes);
}

uint64_t fd_file_syncs(sqfs_file_t* base) {
  FdFile* f = self(base);
  return f->behind ? f->behind->syncs() : 0;
}

void fd_file_hold_writes(sqfs_file_t* base, bool hold) {
  FdFile* f = self(base);
  if (f->behind) f->behind->hold(hold);
}

bool fd_file_preload(sqfs_file_t* base, uint64_t lo, uint64_t hi, uint64_t max_bytes) {
  FdFile* f = self(base);
  if (!f->read_only || f->window || hi <= lo || hi > f->size || hi - lo > max_bytes) return false;
  // 2 MiB aligned and marked for transparent huge pages: a few page faults
  // instead of one per 4 KiB (they cost more than the copy on small VMs).
  constexpr uint64_t kHuge = 2u << 20;
  const uint64_t bytes = (hi - lo + kHuge - 1) / kHuge * kHuge;
  auto* buf = static_cast<char*>(std::aligned_alloc(kHuge, bytes));
  if (!buf) return false;
  ::madvise(buf, bytes, MADV_HUGEPAGE);
  if (fd_read_at(base, lo, buf, hi - lo) != 0) {
    std::free(buf);
    return false;
  }
  f->window = buf;
  f->window_lo = lo;
  f->window_size = hi - lo;
  return true;
}

}  // namespace trainimg::sqsh
