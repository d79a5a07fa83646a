// SPDX-License-Identifier: GPL-3.0-or-later
// Publishing a .sqsh on shared storage (issue 5, "Atomic publish"): dozens
// of nodes may open the target at once, so it must only ever appear
// complete. The image is written to `OUT.sqsh.partial-XXXXXX` beside the
// target (common/atomic_file.h), read back (super block, every table, the
// directory tree) and only then renamed into place; the sidecar
// `OUT.sqsh.json` follows, atomically too.
//
// Interruptions: while a SignalGuard lives, SIGINT, SIGTERM and SIGHUP do
// not kill the process. The handler unlinks every registered partial file at
// once (unlink(2) is async-signal-safe, so nothing is left even if the
// pipeline is blocked in a read) and sets a flag that the pipeline polls
// through check_interrupted(); a second signal exits immediately.
#pragma once

#include <csignal>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "common/atomic_file.h"
#include "common/error.h"
#include "sqsh/sqsh.h"

namespace trainimg::builder {

/// Thrown by check_interrupted(); cmd/ maps it to exit 128 + signal.
class Interrupted : public Error {
 public:
  Interrupted(int sig, const std::string& what);
  int signal_number() const { return sig_; }

 private:
  int sig_;
};

class SignalGuard {
 public:
  SignalGuard();   ///< installs the handlers (not reentrant: one guard at a time)
  ~SignalGuard();  ///< restores the previous handlers
  SignalGuard(const SignalGuard&) = delete;
  SignalGuard& operator=(const SignalGuard&) = delete;

  /// Registers a partial file for removal by the handler; returns its slot.
  /// At most kSlots at once; throws Error beyond.
  static int track(const std::string& partial_path);
  /// Forgets a slot (after commit or discard).
  static void untrack(int slot) noexcept;
  static constexpr int kSlots = 4;

 private:
  struct sigaction old_int_ {}, old_term_ {}, old_hup_ {};
};

/// The signal received since the guard was installed, 0 when none.
int pending_signal() noexcept;
/// Throws Interrupted("<what>: interrupted by SIGINT") when a signal arrived.
void check_interrupted(const std::string& what);

/// An AtomicFile registered with the SignalGuard for its whole life.
class PartialOutput {
 public:
  /// Refuses an existing target unless `replace` (--force), before any work.
  /// `named`: a named partial file even where O_TMPFILE works (its path is
  /// handed to another program).
  PartialOutput(const std::string& target, bool replace, bool named = false);
  ~PartialOutput();
  PartialOutput(const PartialOutput&) = delete;
  PartialOutput& operator=(const PartialOutput&) = delete;

  int fd() const { return file_.fd(); }
  const std::string& target() const { return file_.target(); }
  const std::string& partial_path() const { return file_.partial_path(); }
  AtomicFile& file() { return file_; }

  /// Reads the written image back through sqsh::verify() (super block,
  /// tables, tree, inode count), then fsyncs and renames it into place.
  /// Throws Error naming the target when the check fails or a signal came.
  sqsh::ImageInfo verify_and_commit();
  /// The read-back check of verify_and_commit() alone (commit() follows).
  sqsh::ImageInfo verify();
  /// fsync + rename without the squashfs check (the sidecar).
  void commit();

 private:
  AtomicFile file_;
  int slot_;
};

/// `OUT.sqsh` -> `OUT.sqsh.json`.
std::string sidecar_path(const std::string& image_path);

/// Writes the sidecar atomically (replacing an older one).
void write_sidecar(const std::string& image_path, const nlohmann::ordered_json& doc);

/// Adds a hint to I/O failures that users hit on shared storage (ENOSPC,
/// EIO, EDQUOT, EROFS), saying that nothing was left behind.
Error explain_io_error(const Error& e, const std::string& target);

}  // namespace trainimg::builder
