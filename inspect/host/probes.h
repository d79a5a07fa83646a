// SPDX-License-Identifier: GPL-3.0-or-later
// The host probes (issue 6): how `trainimg host capture`, `host bundle` and
// the Slurm node gate fill a trainimg.host/v1 profile (inspect/host.h).
// A public header of the host library; implemented in probes.cc and
// runner.cc.
#pragma once

#include <chrono>
#include <string>
#include <utility>
#include <vector>

#include "inspect/host.h"

namespace trainimg::host {

// ------------------------------------------------------------------ probes
// How a probe is run. The capture code sees only ProbeRunner: ExecRunner runs
// the real commands (posix_spawn, no shell, pipes, a timeout), ReplayRunner
// reads a bundle directory written by `trainimg host bundle`.

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

// The probes of seed 000 "Host validation" (plus the CUDA driver, Lustre,
// nvidia-fs and LNet facts of seed 004), run in parallel into a HostProfile.

/// Every probe, in a fixed order; ids are the bundle file names.
const std::vector<ProbeSpec>& probe_specs();

/// Runs every probe through `runner`, each on its own thread with
/// `timeout`, then parses the outputs into facts. A probe that is absent,
/// failed, timed out or printed something unparsable leaves its facts unset
/// and says why in its record; capture itself only throws on a broken runner.
HostProfile capture(ProbeRunner& runner, std::chrono::milliseconds timeout, const std::string& source);

/// The node gate's capture: the probes marked fast are run again and
/// replace their records in `boot` (the boot capture; an empty profile when
/// there is none), every fact is re-derived from the records. Probes that
/// are not fast keep the boot capture's evidence.
HostProfile refresh_fast(ProbeRunner& runner, std::chrono::milliseconds timeout, const HostProfile& boot,
                         const std::string& source);

/// This boot's id (/proc/sys/kernel/random/boot_id), "" when unreadable.
std::string current_boot_id();

/// Fills the facts of `p` from its probe records (what capture does after
/// running them; also used by tests on recorded outputs).
void interpret_probes(HostProfile& p);

/// Writes the raw outputs as a bundle directory (created if missing): one
/// file per ok probe, `<id>.failed` holding stderr, `<id>.timeout`. Each file
/// is written atomically.
void write_bundle(const HostProfile& p, const std::string& dir);

/// Probe ids whose status is not ok, as "id (status)".
std::vector<std::string> unanswered_probes(const HostProfile& p);
}  // namespace trainimg::host
