// SPDX-License-Identifier: GPL-3.0-or-later
// Every output of trainimg goes through AtomicFile: the data is written to
// `TARGET.partial-XXXXXX` in the target's directory, and only commit() makes
// it visible, by fsync + rename(2) + fsync of the directory. Destroying an
// uncommitted AtomicFile unlinks the partial file, so an error or exception
// never leaves a half-written output behind (shared storage: dozens of nodes
// may read the target at once).
#pragma once

#include <string>
#include <string_view>

#include "common/fd.h"

namespace trainimg {

class AtomicFile {
 public:
  /// Creates the partial file next to `target`. Without `replace`, commit()
  /// refuses an existing target. Throws Error on failure.
  explicit AtomicFile(std::string target, bool replace = true, unsigned mode = 0644);
  ~AtomicFile();
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  int fd() const { return fd_.get(); }
  const std::string& target() const { return target_; }
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
  UniqueFd fd_;
};

/// Writes `data` to `path` atomically; "-" writes to standard output.
void write_file_atomic(const std::string& path, std::string_view data, bool replace = true);

}  // namespace trainimg
