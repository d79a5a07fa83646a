// SPDX-License-Identifier: GPL-3.0-or-later
// How a probe is run. The capture code sees only ProbeRunner: ExecRunner runs
// the real commands (posix_spawn, no shell, pipes, a timeout), ReplayRunner
// reads a bundle directory written by `trainimg host bundle`.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "inspect/host/profile.h"

namespace trainimg::host {

struct ProbeSpec {
  enum class Kind {
    Exec,      ///< run argv; argv[0] searched in PATH, then in `fallbacks`
    ReadFile,  ///< read `path` (a missing file = absent)
    ListDir,   ///< names in `path`, sorted, one a line (as `ls`)
    Memlock,   ///< RLIMIT_MEMLOCK as `ulimit -l` prints it (a shell builtin: no command to run)
    Hostname,  ///< gethostname(2)
  };
  std::string id;       ///< bundle file name, e.g. "nvidia-smi.csv"
  std::string command;  ///< as a person would type it (recorded in the profile)
  Kind kind = Kind::Exec;
  std::vector<std::string> argv;
  std::vector<std::string>
      fallbacks;  ///< absolute paths of argv[0] outside a user PATH (sbin, /opt/amazon/efa/bin)
  std::string path;
  /// A non-zero exit with output is an answer, not a failure
  /// (`systemctl is-active` exits 3 and prints "inactive").
  bool nonzero_ok = false;
  /// Fast (no GPU, fabric or package-database call): what the Slurm node
  /// gate re-runs at every job start (docs/slurm.md lists them).
  bool fast = false;
};

struct ProbeResult {
  ProbeStatus status = ProbeStatus::Absent;
  int exit_code = 0;
  std::string output;
  std::string error;
  double seconds = 0;
};

class ProbeRunner {
 public:
  virtual ~ProbeRunner() = default;
  /// Never throws for a probe that cannot run: that is a status.
  virtual ProbeResult run(const ProbeSpec& spec, std::chrono::milliseconds timeout) = 0;
};

/// Runs the commands on this machine with LC_ALL=C (no localised numbers),
/// stdin from /dev/null, and kills the probe's process group at the timeout.
class ExecRunner : public ProbeRunner {
 public:
  ProbeResult run(const ProbeSpec& spec, std::chrono::milliseconds timeout) override;
};

/// Replays a bundle: `DIR/<id>` is the output of an ok probe,
/// `DIR/<id>.failed` the standard error of a failed one, `DIR/<id>.timeout`
/// marks a timeout; no file = absent.
class ReplayRunner : public ProbeRunner {
 public:
  explicit ReplayRunner(std::string dir) : dir_(std::move(dir)) {}
  ProbeResult run(const ProbeSpec& spec, std::chrono::milliseconds timeout) override;

 private:
  std::string dir_;
};

}  // namespace trainimg::host
