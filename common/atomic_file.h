// SPDX-License-Identifier: GPL-3.0-or-later
// Every output of trainimg goes through AtomicFile: only commit() makes the
// data visible under the target's name (shared storage: dozens of nodes may
// read the target at once), and nothing a reader could take for an output
// is left behind, not even after kill -9 (docs/fuzzing.md, "Crash safety"):
//
// - Where the file system has O_TMPFILE (ext4, xfs, btrfs, tmpfs), the data
//   goes to an unnamed inode in the target's directory; commit() fsyncs it
//   and links it in with linkat(2) (AT_EMPTY_PATH, or /proc/self/fd/N with
//   AT_SYMLINK_FOLLOW when unprivileged). A killed writer leaves nothing:
//   the kernel frees the inode. Without `replace`, linkat itself refuses an
//   existing target; with `replace` (--force) the inode is linked to a
//   `TARGET.partial-XXXXXX` name and renamed over the target.
// - Elsewhere (O_TMPFILE refused: NFS, Lustre, overlayfs on old kernels)
//   the data goes to `TARGET.partial-XXXXXX` as before, flock(2)ed while its
//   writer lives; commit() is fsync + rename(2). A partial file whose
//   writer was killed is removed by the next AtomicFile for the same target
//   (its lock is free).
// Destroying an uncommitted AtomicFile removes what it wrote, so an error
// or exception never leaves a half-written output behind either.
#pragma once

#include <string>
#include <string_view>

#include "common/fd.h"

namespace trainimg {

class AtomicFile {
 public:
  /// Creates the partial file next to `target` (first removing partial files
  /// of the same target whose writers are gone). Without `replace`, commit()
  /// refuses an existing target. `named` forces a named partial file (for a
  /// caller that must hand its path to another program). Throws Error on
  /// failure.
  explicit AtomicFile(std::string target, bool replace = true, unsigned mode = 0644, bool named = false);
  ~AtomicFile();
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  int fd() const { return fd_.get(); }
  const std::string& target() const { return target_; }
  /// The named partial file, or "" while the data is in an unnamed
  /// (O_TMPFILE) inode.
  const std::string& partial_path() const { return partial_; }

  /// Appends bytes; throws Error (with the target's name) on a short write.
  void write(std::string_view data);
  /// fsync, rename into place, fsync the directory. Throws Error on failure
  /// (the partial file is then removed by the destructor).
  void commit();
  /// Removes the partial file now (idempotent).
  void discard() noexcept;

 private:
  std::string target_;
  std::string partial_;
  bool replace_;
  bool committed_ = false;
  bool anonymous_ = false;  ///< O_TMPFILE: no name until commit()
  UniqueFd fd_;
};

/// Removes `TARGET.partial-XXXXXX` files whose writer is gone (their flock
/// is free); returns how many. Called by every AtomicFile's constructor.
int remove_stale_partials(const std::string& target) noexcept;

/// Writes `data` to `path` atomically; "-" writes to standard output.
void write_file_atomic(const std::string& path, std::string_view data, bool replace = true);

}  // namespace trainimg
