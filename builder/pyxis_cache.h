// SPDX-License-Identifier: GPL-3.0-or-later
// The shared .sqsh cache of the Pyxis importer (TRAINIMG_PYXIS_CACHE=DIR, a
// directory with mode 1777 like /tmp, e.g. on Lustre). One entry per image
// manifest digest and import options:
//   DIR/sha256-HEX-zstd3-1M.sqsh        the image, mode 0644
//   DIR/sha256-HEX-zstd3-1M.sqsh.json   its sidecar (digest, options, the
//                                       inspection's verdict and facts)
//   DIR/locks/NAME.lock                 the per-entry flock (inspect/inspect.h registry::PathLock)
//   DIR/leases/NAME@HOST.UID.JOB.STEP   one lease per job step using the entry
//   DIR/used/NAME.UID                   touched at every use (last use, for prune)
// The first caller builds the entry under the exclusive lock while the
// others wait (a line on stderr every 10 s); every caller gets the same
// path. A lease is a file on which a small keeper process (forked by `get`,
// no open descriptor but the lease's) holds a shared flock until `release`
// unlinks the file or the process that ran the importer (Pyxis's
// slurmstepd) exits; when the node dies the lock goes with it. prune
// removes an entry only when it can lock the entry exclusively and no lease
// is locked; a lease whose lock is gone is stale and removed. An entry is
// only trusted when its sidecar names the manifest digest, the file and the
// options and its size matches (anyone can write into a 1777 directory).
#pragma once

#include <cstdint>
#include <iosfwd>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "builder/import.h"

namespace trainimg::builder {

struct SharedEntry {
  std::string path;  ///< DIR/NAME.sqsh; empty: the cache cannot hold it (see get)
  nlohmann::ordered_json sidecar;
  bool built = false;  ///< this call imported it
};

struct SharedCacheItem {
  std::string name;    ///< sha256-HEX-OPTIONS
  std::string digest;  ///< the manifest digest (from the name)
  uint64_t bytes = 0;  ///< image + sidecar
  int64_t last_used = 0;
  unsigned leases = 0;   ///< live leases
  bool trusted = false;  ///< the sidecar matches
};

struct SharedPruneResult {
  uint64_t removed = 0, removed_bytes = 0, kept = 0, kept_bytes = 0;
  uint64_t leased = 0;        ///< kept because a job step holds a lease
  uint64_t busy = 0;          ///< kept because it is being built
  uint64_t stale_leases = 0;  ///< leases of processes or nodes that are gone, removed
};

class PyxisCache {
 public:
  /// Throws Error when `dir` is not an existing directory.
  explicit PyxisCache(std::string dir);
  const std::string& dir() const { return dir_; }

  /// "sha256-HEX-zstd3-1M" for a manifest digest and the import options.
  static std::string entry_name(const std::string& digest, const ImportOptions& o);

  /// The entry for `digest`, built from `o.source` under the lock when it
  /// is missing or untrusted (o.output is set here). Takes the lease
  /// `lease_id` first. Waiting and building are reported on `log`. Returns
  /// an empty path when an untrusted entry of another user is in the way
  /// (the sticky bit keeps it): the caller falls back to a private file.
  /// Throws Error from the import; nothing named after the digest is then
  /// left by this call (partial, lock file, lease).
  SharedEntry get(const std::string& digest, ImportOptions o, const std::string& lease_id, std::ostream& log);

  /// Drops the leases `lease_id` holds (the entries stay). Idempotent.
  void release(const std::string& lease_id) const;

  std::vector<SharedCacheItem> list() const;  ///< least recently used first
  SharedPruneResult prune(std::optional<uint64_t> max_size, std::optional<int64_t> older_than_s) const;

 private:
  std::string dir_;
};

}  // namespace trainimg::builder
