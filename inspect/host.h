// SPDX-License-Identifier: GPL-3.0-or-later
// The host library (issue 6), namespace trainimg::host: the trainimg.host/v1
// profile and the host rules of domain.md §6 that judge it (`host check`).
// Implemented under inspect/host/.
//
// The host library's public headers (images have their own:
// inspect/inspect.h) are this one and, in inspect/host/:
//   probes.h   - the probes that capture a profile (ExecRunner, ReplayRunner)
//   fleet.h    - `fleet check` and `host diff`
//   checkers.h - the NCCL log, nccl-tests and GDS checkers
// rules.h (the rules' shared context; the rule list is rules/rules.def) and
// parsers.h (the probe output parsers) there are internal to the library.
//
// inspect --host reads only the profile: read_profile(path) and the
// optional fields of HostProfile (efa_installer_version, libfabric_version,
// ofi_nccl_version, openmpi4/5_version, driver_version, cuda_driver_version,
// kernel, gpu_model, gpu_count, efa_device_count).
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/diagnostic.h"
#include "common/report.h"

namespace trainimg::host {

// ----------------------------------------------------------------- profile
// trainimg.host/v1: what `trainimg host capture` writes about one node, and
// what `host check`, `host diff` and `inspect --host` read. The facts are
// plain optional fields (absent = the probe could not tell); the probes keep
// the raw evidence (command, output, status) so a profile can be re-judged.

inline constexpr std::string_view kProfileSchema = "trainimg.host/v1";

/// ok: the command ran and exited as expected; absent: the tool or file does
/// not exist on this node (a fact, not an error); failed: it ran and failed
/// (stderr kept); timeout: killed after the per-probe timeout.
enum class ProbeStatus { Ok, Absent, Failed, Timeout };
std::string_view to_string(ProbeStatus s);
std::optional<ProbeStatus> parse_probe_status(std::string_view s);

/// One probe's evidence, as recorded.
struct ProbeRecord {
  std::string command;  ///< what ran, as a shell user would type it
  ProbeStatus status = ProbeStatus::Absent;
  int exit_code = 0;
  std::string output;  ///< raw standard output (or file content)
  std::string error;   ///< standard error, or why the probe did not run
  double seconds = 0;
  nlohmann::ordered_json parsed;  ///< the values this probe contributed
};

struct Gpu {
  int index = 0;
  std::string name;
  std::string driver_version;
  bool operator==(const Gpu&) const = default;
};

struct HostProfile {
  std::string hostname;
  std::string captured_at;  ///< UTC, ISO 8601
  std::string source;       ///< "live" or "bundle:DIR"
  std::string boot_id;      ///< /proc/sys/kernel/random/boot_id at capture ("" unknown)

  // --- facts (seed 000 "Validated environment" rows) ---
  std::optional<std::string> kernel;               ///< uname -r
  std::optional<std::string> driver_version;       ///< NVIDIA driver (nvidia-smi)
  std::optional<std::string> cuda_driver_version;  ///< "CUDA Version" of nvidia-smi
  std::optional<std::string> gpu_model;            ///< e.g. "NVIDIA B200" (first GPU)
  std::optional<int> gpu_count;
  std::vector<Gpu> gpus;
  std::optional<std::string> fabric_manager;      ///< systemctl is-active output
  std::optional<std::string> efa_driver_version;  ///< modinfo efa
  std::optional<std::string> efa_installer_version;
  std::optional<std::string> libfabric_version;
  std::optional<std::string> ofi_nccl_version;  ///< aws-ofi-nccl
  std::optional<std::string> openmpi4_version;
  std::optional<std::string> openmpi5_version;
  std::optional<std::string> pmix_version;
  std::optional<int> efa_device_count;          ///< rdmap* under /sys/class/infiniband
  std::vector<std::string> infiniband_devices;  ///< every name listed there
  std::optional<int> fi_info_domain_count;
  std::vector<std::string> fi_info_domains;
  std::optional<bool> efa_module_loaded;
  std::optional<bool> gdrdrv_loaded;
  std::optional<bool> dev_gdrdrv;
  std::optional<std::string> memlock;  ///< ulimit -l: "unlimited" or KiB
  std::optional<bool> nvme_mounted;    ///< /opt/dlami/nvme is a mount point
  std::optional<std::string> nvme_size;
  std::vector<std::string> held_packages;     ///< apt-mark showhold
  std::optional<bool> kernel_held;            ///< a linux-image/-aws package is held
  std::optional<std::string> lustre_version;  ///< lfs --version
  std::optional<bool> lustre_module_loaded;   ///< lsmod lists lustre
  std::optional<bool> lustre_mounted;         ///< /proc/mounts has a lustre file system
  std::optional<bool> nvidia_fs_loaded;
  std::optional<std::string> nvidia_fs_version;  ///< NVFS Driver(version: …)
  std::optional<int> lnet_efa_count;             ///< nid …@efa entries
  std::optional<int> lnet_efa_up;                ///< of those, status: up
  std::optional<std::string> efa_fsx_service;    ///< configure-efa-fsx-lustre-client state

  /// Evidence by probe id (the bundle file name), in id order.
  std::map<std::string, ProbeRecord> probes;
};

/// Serializes to trainimg.host/v1 JSON (facts first, then probes).
nlohmann::ordered_json to_json(const HostProfile& p);
/// Pretty-printed JSON text with a trailing newline.
std::string serialize(const HostProfile& p);

/// Parses trainimg.host/v1 text. Throws trainimg::Error naming `file` with a
/// line:col for malformed JSON, an unknown "schema" ("trainimg.host/v2" is
/// refused, not guessed at), and a wrong type for any known field (the
/// position of its key). Unknown fields are ignored (forward compatible).
HostProfile parse_profile(std::string_view text, const std::string& file = "<profile>");
/// Reads and parses a file ("-" = stdin).
HostProfile read_profile(const std::string& path);

/// The facts as flat "name" -> display value pairs (absent facts omitted):
/// what `host diff` compares and `host check` prints.
std::vector<std::pair<std::string, std::string>> fact_rows(const HostProfile& p);

// -------------------------------------------------------------- host rules
// The host rules of domain.md §6 (seed 000 expected results, seed 004 GDS
// judgement); one file per rule under inspect/host/rules/, listed once in
// inspect/host/rules/rules.def.

/// `--expect gpus=8,efas=8,gpu-model=B200,efa-driver>=3.3.0,kernel=…`.
struct HostExpectations {
  std::optional<int> gpus;
  std::optional<int> efas;
  std::optional<std::string> gpu_model;       ///< a word of the nvidia-smi name ("B200")
  std::optional<std::string> efa_driver_min;  ///< efa-driver>=X
  std::optional<std::string> efa_driver;      ///< efa-driver=X (same release)
  std::optional<std::string> kernel;          ///< the recorded AMI kernel
  std::optional<std::string> nvidia_fs_min;   ///< nvidia-fs>=X
  std::optional<bool> lustre;                 ///< lustre=yes|no
  std::optional<bool> gds;                    ///< gds=yes|no
  std::optional<int> lnet_efas;               ///< lnet-efas=N (default: efas)
  /// Rule ids some key names (gpus -> gpu-count, kernel -> kernel-changed,
  /// fabric-manager=yes -> fabric-manager, …): for those an input that was
  /// not captured is a failure, not "cannot tell".
  std::set<std::string> named;
  bool strict = false;  ///< --strict: every uncaptured input is a failure
};
/// Parses the comma-separated list. Throws Error (file "--expect", column of
/// the bad item) for an unknown key, a missing operator or a bad value.
HostExpectations parse_expectations(std::string_view spec);

/// Every host rule (domain "host"), in domain.md §6 order.
std::vector<RuleInfo> host_rules();
/// The rules `host check` evaluates on a profile (the HOST_RULEs of rules.def).
std::vector<RuleInfo> profile_rules();

struct HostCheckResult {
  std::vector<Diagnostic> findings;
  std::vector<std::string> notes;
};
/// Runs every profile rule.
HostCheckResult check_host(const HostProfile& p, const HostExpectations& e, const HostProfile* baseline,
                           const std::string& file, const std::string& baseline_file = {});
/// `host check`'s report before policy (kind "host"): check_host's findings
/// and notes, the profile's facts (text rows and JSON), the inputs `where`
/// and, with a reference profile, `baseline_file`.
Report host_check_report(const HostProfile& p, const HostExpectations& e, const HostProfile* baseline,
                         const std::string& where, const std::string& baseline_file = {});
}  // namespace trainimg::host
