// SPDX-License-Identifier: GPL-3.0-or-later
// Registries: the shared blob cache with its file lock (namespace registry:
// inspect/registry/blob_cache.cc); SHA-256 digests are common/sha256.h. The registry client
// itself is internal (inspect/registry/client.h); registry images are read
// through open_source("docker://…") (inspect/sources/source.h).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/fd.h"
#include "common/sha256.h"
#include "common/shared_dir.h"

namespace trainimg::inspect {

// The content-addressed blob cache of registry sources: DIR/blobs/sha256/HEX,
// written as DIR/tmp/HEX.PID.partial and renamed into place only after the
// fill verified it (digest and size), so a blob is never visible half
// written or unverified. One flock per digest (DIR/locks/HEX.lock, see
// PathLock) makes concurrent processes, on one node or many sharing DIR,
// download a blob once; a lock dies with its process, so a killed download
// blocks nobody. A failed fill removes its lock file too: after a digest
// mismatch no file named after that digest is left. Hits take no lock.
// Every hit refreshes the entry's mtime: prune removes the least recently
// used first, and never an entry whose lock is held.
// Many users, one DIR (mode 1777; common/shared_dir.h): a blob is used only
// from a file owned by the caller, root or an account of
// TRAINIMG_CACHE_TRUST (default: DIR's owner) that nobody else can write;
// those accounts write DIR itself, every other user DIR/user-UID (0700), so
// what one user wrote is never read by another user's import.
namespace registry {

/// TRAINIMG_CACHE, else $XDG_CACHE_HOME/trainimg, else ~/.cache/trainimg.
std::string default_cache_dir();

/// An flock(2) on a lock file that its exclusive holder may unlink: after
/// locking, the path is checked to still name the locked file (else the
/// lock is taken again on the new one), so a waiter never holds a lock on a
/// removed file while another process locks its replacement. The lock dies
/// with its process (and, on a cluster file system mounted with flock
/// support, with its node).
class PathLock {
 public:
  PathLock() = default;
  /// Blocks until held; `on_wait(seconds)` is called about once a second
  /// while another process holds it. Creates the file (mode 0666 less the
  /// umask; opened read-only when another user owns it).
  static PathLock acquire(const std::string& path, bool shared,
                          const std::function<void(unsigned waited_s)>& on_wait = {});
  /// Held at once, or an unheld lock.
  static PathLock try_acquire(const std::string& path, bool shared);
  bool held() const { return static_cast<bool>(fd_); }
  /// Unlinks the lock file (exclusive holders only), then releases.
  void remove();
  void release() { fd_.reset(); }

 private:
  static PathLock take(const std::string& path, bool shared, bool wait,
                       const std::function<void(unsigned)>& on_wait);
  std::string path_;
  UniqueFd fd_;
};

/// mkdir -p with `mode` for each directory it creates (chmod'ed, so the
/// umask does not narrow 01777).
void make_dirs(const std::string& path, unsigned mode = 0755);

struct CacheEntry {
  std::string digest;  ///< "sha256:…"
  uint64_t size = 0;
  int64_t last_used = 0;  ///< seconds since the epoch (the file's mtime)
  std::string area;       ///< DIR, or DIR/user-UID
};

struct PruneResult {
  uint64_t removed = 0, removed_bytes = 0;
  uint64_t kept = 0, kept_bytes = 0;
  uint64_t busy = 0;  ///< entries skipped because another process holds their lock
};

class BlobCache {
 public:
  /// `dir` empty: no cache at all (blobs go to unnamed temporary files).
  /// Throws Error when others can write `dir` without the sticky bit, or
  /// TRAINIMG_CACHE_TRUST is malformed.
  explicit BlobCache(std::string dir);
  bool enabled() const { return !dir_.empty(); }
  const std::string& dir() const { return dir_; }
  /// Where this caller writes: dir(), or its own area DIR/user-UID.
  const std::string& write_dir() const { return write_dir_; }

  /// The published blob, or an invalid fd when it is not cached.
  UniqueFd open(const std::string& digest) const;

  /// The blob, from the cache or made by `fill(fd)`, which writes it into
  /// the (empty, writable) fd and throws when it cannot be verified; nothing
  /// is then left under any name. Returns a read-only fd positioned at 0.
  UniqueFd get(const std::string& digest, const std::function<void(int fd)>& fill) const;

  std::vector<CacheEntry> list() const;
  /// Removes entries least recently used first: those older than
  /// `older_than_s`, then more until the total is at most `max_size`.
  PruneResult prune(std::optional<uint64_t> max_size, std::optional<int64_t> older_than_s) const;

 private:
  std::string blob_path(const std::string& area, const std::string& digest) const;
  std::vector<std::string> areas() const;
  std::string dir_, write_dir_;
  std::optional<Trust> trust_;
};

/// "7d", "12h", "30m", "45s" -> seconds; nullopt when malformed.
std::optional<int64_t> parse_duration(const std::string& s);

}  // namespace registry

}  // namespace trainimg::inspect
