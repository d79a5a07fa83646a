// SPDX-License-Identifier: GPL-3.0-or-later
// The content-addressed blob cache of registry sources: DIR/blobs/sha256/HEX,
// written as DIR/tmp/HEX.PID.partial and renamed into place only after the
// fill verified it (digest and size), so a blob is never visible half
// written or unverified. One flock per digest (DIR/locks/HEX.lock) makes
// concurrent processes, on one node or many sharing DIR, download a blob
// once; a lock dies with its process, so a killed download blocks nobody.
// Hits take no lock. Every hit refreshes the entry's mtime: prune removes
// the least recently used first, and never an entry whose lock is held.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "common/fd.h"

namespace trainimg::inspect::registry {

/// TRAINIMG_CACHE, else $XDG_CACHE_HOME/trainimg, else ~/.cache/trainimg.
std::string default_cache_dir();

struct CacheEntry {
  std::string digest;  ///< "sha256:…"
  uint64_t size = 0;
  int64_t last_used = 0;  ///< seconds since the epoch (the file's mtime)
};

struct PruneResult {
  uint64_t removed = 0, removed_bytes = 0;
  uint64_t kept = 0, kept_bytes = 0;
  uint64_t busy = 0;  ///< entries skipped because another process holds their lock
};

class BlobCache {
 public:
  /// `dir` empty: no cache at all (blobs go to unnamed temporary files).
  explicit BlobCache(std::string dir);
  bool enabled() const { return !dir_.empty(); }
  const std::string& dir() const { return dir_; }

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
  std::string blob_path(const std::string& digest) const;
  std::string dir_;
};

/// "50G", "512M", "1024" -> bytes (K/M/G/T, powers of 1024); nullopt when malformed.
std::optional<uint64_t> parse_byte_size(const std::string& s);
/// "7d", "12h", "30m", "45s" -> seconds; nullopt when malformed.
std::optional<int64_t> parse_duration(const std::string& s);

}  // namespace trainimg::inspect::registry
