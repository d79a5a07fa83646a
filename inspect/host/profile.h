// SPDX-License-Identifier: GPL-3.0-or-later
// trainimg.host/v1: what `trainimg host capture` writes about one node, and
// what `host check`, `host diff` and `inspect --host` read. The facts are
// plain optional fields (absent = the probe could not tell); the probes keep
// the raw evidence (command, output, status) so a profile can be re-judged.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace trainimg::host {

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

}  // namespace trainimg::host
