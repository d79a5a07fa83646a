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
// is locked; a lease whose lock is gone is stale and removed.
//
// Many users, one directory (common/shared_dir.h): an entry is used only
// when its file and sidecar are owned by the caller, root, or an account
// of TRAINIMG_PYXIS_CACHE_TRUST (default: the directory's owner), nobody
// else can write them (entries are 0444), and the sidecar vouches for the
// manifest digest, the file's name and size and the options. Trusted
// accounts (the CI that publishes images: `trainimg cache warm`) write the
// top level; every other user imports into their own area DIR/user-UID
// (0700, same layout, same locks and leases), once for all their jobs and
// nodes, and uses a trusted top-level entry when there is one. The sidecar
// keeps the SHA-256 of the .sqsh taken when it was written ("sqsh_sha256"),
// which `trainimg cache verify` checks.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "builder/import/import.h"
#include "common/shared_dir.h"

namespace trainimg::builder {

struct SharedEntry {
  std::string path;  ///< DIR/NAME.sqsh; empty: the cache cannot hold it (see get)
  nlohmann::ordered_json sidecar;
  bool built = false;  ///< this call imported it
};

struct SharedCacheItem {
  std::string area;    ///< DIR, or DIR/user-UID
  std::string name;    ///< sha256-HEX-OPTIONS
  uint32_t owner = 0;  ///< the .sqsh's owner (uid)
  std::string digest;  ///< the manifest digest (from the name)
  uint64_t bytes = 0;  ///< image + sidecar
  int64_t last_used = 0;
  unsigned leases = 0;   ///< live leases
  bool trusted = false;  ///< the owner may be trusted there and the sidecar matches
};

/// What `verify` found for one entry.
struct SharedVerifyItem {
  SharedCacheItem item;
  std::string recorded;  ///< the sidecar's sqsh_sha256 (empty: none recorded)
  std::string actual;    ///< the file's SHA-256 now
  std::string problem;   ///< empty when the entry is sound
};

struct SharedPruneResult {
  uint64_t removed = 0, removed_bytes = 0, kept = 0, kept_bytes = 0;
  uint64_t leased = 0;        ///< kept because a job step holds a lease
  uint64_t busy = 0;          ///< kept because it is being built
  uint64_t stale_leases = 0;  ///< leases of processes or nodes that are gone, removed
};

class PyxisCache {
 public:
  /// Throws Error when `dir` is not an existing directory, when others can
  /// write it without the sticky bit, or when `trust_spec`
  /// (TRAINIMG_PYXIS_CACHE_TRUST) is malformed.
  explicit PyxisCache(std::string dir, const std::string& trust_spec = {});
  const std::string& dir() const { return dir_; }
  const Trust& trust() const { return trust_; }

  /// "sha256-HEX-zstd3-1M" for a manifest digest and the import options.
  static std::string entry_name(const std::string& digest, const ImportOptions& o);

  /// The entry for `digest`: a trusted top-level one, else the caller's
  /// own (the top level for trusted accounts, DIR/user-UID for the others),
  /// built from `o.source` under the lock when it is missing or untrusted
  /// (o.output and o.content_digest are set here). Takes the lease
  /// `lease_id` (NODE.UID.JOB.STEP) first. Waiting and building are
  /// reported on `log`. Returns an empty path when an untrusted file that
  /// cannot be removed is in the way, or the caller's own area is taken:
  /// the caller falls back to a private file (and `log` says why). Throws
  /// Error from the import; nothing named after the digest is then left by
  /// this call (partial, lock file, lease).
  SharedEntry get(const std::string& digest, ImportOptions o, const std::string& lease_id, std::ostream& log);

  /// Drops the caller's leases for the step `step` (UID.JOB.STEP) on
  /// `node` (SLURMD_NODENAME when Slurm set it, else the host name; a lease
  /// taken on this host under another node name is dropped too, as Slurm
  /// does not set SLURMD_NODENAME in task cleanup). The entries stay.
  /// Idempotent.
  void release(const std::string& step, const std::string& node) const;

  /// Every entry of every area the caller can read, least recently used first.
  std::vector<SharedCacheItem> list() const;
  SharedPruneResult prune(std::optional<uint64_t> max_size, std::optional<int64_t> older_than_s) const;
  /// Reads every entry and compares its SHA-256 with the sidecar's.
  std::vector<SharedVerifyItem> verify() const;
  /// Trusted entries of the top level and of `area` (the caller's) imported
  /// from the same repository as `source` (any tag or digest), most recently
  /// used first, at most 3: what a new import may reuse the blocks of.
  std::vector<std::string> reuse_candidates(const std::string& source, const std::string& area) const;

 private:
  std::string dir_;
  Trust trust_;
};

// ------------------------------- `trainimg cache …` (builder/pyxis/cache_report.cc)
// Text (sizes in KiB/MiB/GiB with one decimal, times in UTC ISO 8601) or
// JSON: trainimg.cache/v1, trainimg.pyxis-cache/v1,
// trainimg.pyxis-cache-verify/v1. Each throws what the cache throws.

/// The registry blob cache at `dir` (empty: the default), least recently used first.
void blob_cache_ls(const std::string& dir, bool json, std::ostream& out);
/// Prunes the blob cache at `dir` and says what it removed and kept.
void blob_cache_prune(const std::string& dir, std::optional<uint64_t> max_size,
                      std::optional<int64_t> older_than_s, std::ostream& out);
void pyxis_cache_ls(const PyxisCache& cache, bool json, std::ostream& out);
void pyxis_cache_prune(const PyxisCache& cache, std::optional<uint64_t> max_size,
                       std::optional<int64_t> older_than_s, std::ostream& out);
/// Every entry against its sidecar's SHA-256; returns whether all matched.
bool pyxis_cache_verify(const PyxisCache& cache, bool json, std::ostream& out);

}  // namespace trainimg::builder
