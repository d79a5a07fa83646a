// SPDX-License-Identifier: GPL-3.0-or-later
#include "sqsh/fd_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <new>

namespace trainimg::sqsh {
namespace {

// sqfs_file_t must be the first member: libsquashfs only sees the base.
struct FdFile {
  sqfs_file_t base;
  int fd;
  bool read_only;
  bool own;
  uint64_t size;
  uint64_t handed_to_writeback;  // [0, this) queued by sync_file_range
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

int fd_read_at(sqfs_file_t* base, sqfs_u64 offset, void* buffer, size_t size) {
  FdFile* f = self(base);
  if (offset > f->size || size > f->size - offset) return SQFS_ERROR_OUT_OF_BOUNDS;
  if (f->window && offset >= f->window_lo && size <= f->window_size &&
      offset - f->window_lo <= f->window_size - size) {
    std::memcpy(buffer, f->window + (offset - f->window_lo), size);
    return 0;
  }
  auto* p = static_cast<char*>(buffer);
  while (size > 0) {
    ssize_t n = ::pread(f->fd, p, size, static_cast<off_t>(offset));
    if (n < 0) {
      if (errno == EINTR) continue;
      f->last_errno = errno;
      return SQFS_ERROR_IO;
    }
    if (n == 0) return SQFS_ERROR_OUT_OF_BOUNDS;  // file shrank under us
    p += n;
    offset += static_cast<uint64_t>(n);
    size -= static_cast<size_t>(n);
  }
  return 0;
}

int fd_write_at(sqfs_file_t* base, sqfs_u64 offset, const void* buffer, size_t size) {
  FdFile* f = self(base);
  if (f->read_only) return SQFS_ERROR_IO;
  const auto* p = static_cast<const char*>(buffer);
  uint64_t end = offset + size;
  while (size > 0) {
    ssize_t n = ::pwrite(f->fd, p, size, static_cast<off_t>(offset));
    if (n < 0) {
      if (errno == EINTR) continue;
      f->last_errno = errno;
      return SQFS_ERROR_IO;
    }
    p += n;
    offset += static_cast<uint64_t>(n);
    size -= static_cast<size_t>(n);
  }
  if (end > f->size) f->size = end;
  // Write-behind: start the write-back of every 32 MiB written, so that the
  // fsync before the image is published finds little left to write (an
  // image is written once, front to back, then its tables; a rewrite of an
  // earlier range is queued again at the next fsync). A file system that
  // cannot (or a pipe) just leaves it all to the fsync.
  constexpr uint64_t kWriteBehind = 32u << 20;
  if (f->size - f->handed_to_writeback >= kWriteBehind) {
    ::sync_file_range(f->fd, static_cast<off_t>(f->handed_to_writeback),
                      static_cast<off_t>(f->size - f->handed_to_writeback), SYNC_FILE_RANGE_WRITE);
    f->handed_to_writeback = f->size;
  }
  return 0;
}

sqfs_u64 fd_get_size(const sqfs_file_t* base) {
  return self(base)->size;
}

int fd_truncate(sqfs_file_t* base, sqfs_u64 size) {
  FdFile* f = self(base);
  if (f->read_only) return SQFS_ERROR_IO;
  if (::ftruncate(f->fd, static_cast<off_t>(size)) != 0) {
    f->last_errno = errno;
    return SQFS_ERROR_IO;
  }
  f->size = size;
  f->handed_to_writeback = std::min(f->handed_to_writeback, size);
  return 0;
}

void fd_destroy(sqfs_object_t* base) {
  FdFile* f = reinterpret_cast<FdFile*>(base);
  if (f->own) ::close(f->fd);
  std::free(f->window);
  delete f;
}

FdFile* make(int fd, bool read_only, bool own, uint64_t size);

sqfs_object_t* fd_copy(const sqfs_object_t* base) {
  const FdFile* f = reinterpret_cast<const FdFile*>(base);
  if (!f->read_only) return nullptr;
  int fd = ::fcntl(f->fd, F_DUPFD_CLOEXEC, 0);
  if (fd < 0) return nullptr;
  FdFile* c = make(fd, true, true, f->size);
  if (!c) ::close(fd);
  return reinterpret_cast<sqfs_object_t*>(c);
}

FdFile* make(int fd, bool read_only, bool own, uint64_t size) {
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
  f->handed_to_writeback = size;
  f->last_errno = 0;
  return f;
}

}  // namespace

FilePtr make_fd_file(int fd, bool read_only, bool own) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) return nullptr;
  FdFile* f = make(fd, read_only, own, static_cast<uint64_t>(st.st_size));
  if (!f) {
    errno = ENOMEM;
    return nullptr;
  }
  return FilePtr(&f->base);
}

int fd_file_errno(const sqfs_file_t* f) {
  return self(f)->last_errno;
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
