// SPDX-License-Identifier: GPL-3.0-or-later
// Pyxis's importer plug-in protocol (NVIDIA/pyxis importers/README.md, read
// for the protocol only): `plugstack.conf: required pyxis.so
// importer=/usr/bin/trainimg-pyxis-importer` where that file runs
// `trainimg pyxis-importer "$@"`. Pyxis then calls
//   EXE get URI   -> first stdout line: the absolute path of a .sqsh
//   EXE release   -> removes it; called up to twice, must be idempotent
// with PYXIS_RUNTIME_PATH and the Slurm job variables in the environment.
// Like Pyxis's simple importer, each job step gets its own file
// `${PYXIS_RUNTIME_PATH}/${SLURM_JOB_UID}/${SLURM_JOB_ID}.${SLURM_STEP_ID}.sqsh`,
// written through import_image (atomic: Pyxis never sees half a file).
// With TRAINIMG_PYXIS_CACHE=DIR, images with a manifest digest (docker://,
// oci:) go to the shared cache of builder/pyxis/cache.h instead: built once,
// the same path for every step, a lease per step that `release` drops.
#pragma once

#include <sys/types.h>

#include <functional>
#include <iosfwd>
#include <string>

namespace trainimg::builder {

struct PyxisEnv {
  std::string runtime_path;  ///< PYXIS_RUNTIME_PATH (default /run/pyxis)
  std::string job_uid;       ///< SLURM_JOB_UID (default: the caller's uid)
  std::string job_id;        ///< SLURM_JOB_ID (required)
  /// SLURM_STEP_ID; Slurm does not set it in the batch step (nor the extern
  /// and interactive ones): then the step as Slurm names it in slurmstepd's
  /// process title "slurmstepd: [JOB.STEP]": batch, extern, interactive.
  std::string step_id;
  std::string node;          ///< SLURMD_NODENAME, else the host name
  std::string shared_cache;  ///< TRAINIMG_PYXIS_CACHE (empty: a private per-step file)
  std::string cache_trust;   ///< TRAINIMG_PYXIS_CACHE_TRUST (common/shared_dir.h)
};

/// The step's lease name in the shared cache: NODE.UID.JOB.STEP.
std::string pyxis_lease_id(const PyxisEnv& env);

/// The step of job `job_id` that the process `pid` or one of its parents
/// (up to 8 levels) runs as slurmstepd, read from its process title
/// ("slurmstepd: [JOB.STEP]"); empty when none is found.
std::string slurm_step_from_process(pid_t pid, const std::string& job_id);

/// Reads the variables through `getenv`; throws Error naming the first
/// required one that is missing, or one that would leave its directory
/// (contains '/' or is "." / ".."). Without SLURM_STEP_ID the step comes
/// from `step_of_job(SLURM_JOB_ID)` (default: slurm_step_from_process on
/// the caller's parent).
PyxisEnv pyxis_env(const std::function<const char*(const char*)>& getenv,
                   const std::function<std::string(const std::string&)>& step_of_job = {});

/// `trainimg cache warm URI --pyxis-cache DIR`: fills the shared cache with
/// the entry a job would use for `uri` (docker:// or oci:, which have a
/// manifest digest), as the importer makes it; run by a trusted account
/// (the CI that publishes images) so every user's jobs use it. Returns the
/// entry's path; `built` says whether this call imported it.
std::string pyxis_cache_warm(const std::string& uri, const std::string& dir, const std::string& trust,
                             std::ostream& log, bool& built);

/// The per-step squashfs path (absolute when runtime_path is).
std::string pyxis_sqsh_path(const PyxisEnv& env);

/// The image gate at job start (issue 12): the image against this node.
struct PreflightOptions {
  std::string policy = "error";  ///< TRAINIMG_PREFLIGHT: error (refuse), warn (report, run), off
  std::string host_profile;      ///< TRAINIMG_HOST_PROFILE, default /run/trainimg/host.json
  std::string cache_dir;  ///< TRAINIMG_PREFLIGHT_CACHE, default ${PYXIS_RUNTIME_PATH}/trainimg-preflight
};
/// From the environment; throws Error for a TRAINIMG_PREFLIGHT other than
/// error|warn|off.
PreflightOptions preflight_options(const std::function<const char*(const char*)>& getenv,
                                   const PyxisEnv& env);

/// Thrown by pyxis_get when the gate refuses the image: the report (every
/// error finding, "trainimg: RULE: MESSAGE" lines) for Pyxis to show.
struct PreflightRefused {
  std::string report;
};

/// Imports `uri` (docker://, dockerd://, docker-archive:, oci:, dir:) to the step's
/// path with zstd level 3 and 1 MiB blocks (Pyxis's caching importer
/// settings), replacing a previous file atomically; creates the user
/// directory 0700. Returns the path. Throws Error (podman:// is refused
/// with a hint).
/// With env.shared_cache: the shared entry for the image's manifest digest
/// (waiting and building reported on `log` when given); sources without a
/// digest (dockerd://, docker-archive:, dir:) get the private file.
std::string pyxis_get(const std::string& uri, const PyxisEnv& env, std::ostream* log = nullptr);
/// pyxis_get, then the gate: the image's findings against the node's host
/// profile (inspect --host), cached under the cache directory by image
/// digest and the host's EFA/libfabric/aws-ofi-nccl/CUDA versions, so an
/// image is read once per node type, not per job. `notes` receives what
/// goes to stderr when the job runs ("cannot tell", warnings). Throws
/// PreflightRefused (after removing the step's files) on an error finding
/// with policy error.
std::string pyxis_get(const std::string& uri, const PyxisEnv& env, const PreflightOptions& o,
                      std::string& notes, std::ostream* log = nullptr);

/// Removes the step's .sqsh and its sidecar, and drops the step's leases in
/// the shared cache (never a shared entry); nothing to remove is fine.
/// Throws Error only when a file exists and cannot be removed.
void pyxis_release(const PyxisEnv& env);

// ------------------------------- `trainimg cache …` (builder/pyxis/cache_report.cc)
/// One `trainimg cache` subcommand, as its flags gave it.
struct CacheCommand {
  enum Op { Ls, Prune, Warm, Verify } op = Ls;
  std::string dir;    ///< --cache: the blob cache (empty: the default)
  std::string pyxis;  ///< --pyxis-cache (empty: the blob cache; warm/verify: TRAINIMG_PYXIS_CACHE)
  std::string uri;    ///< warm's URI
  std::string max_size, older_than;  ///< prune's limits, as typed ("50G", "7d")
  bool json = false;
};
/// Runs it (trust from TRAINIMG_PYXIS_CACHE_TRUST); warm reports progress on
/// `err`. Returns the exit code: 0, or 1 when verify found a bad entry.
/// Throws Error for a bad size or duration, prune without a limit, no
/// Pyxis cache for warm/verify, or what the cache throws.
int run_cache_command(const CacheCommand& c, std::ostream& out, std::ostream& err);

}  // namespace trainimg::builder
