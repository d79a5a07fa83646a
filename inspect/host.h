// SPDX-License-Identifier: GPL-3.0-or-later
// The host library (issue 6): the trainimg.host/v1 profile, the probes that
// fill it, the host rules of domain.md §6, the fleet check and diff, and the
// NCCL log, nccl-tests and GDS checkers. Namespace trainimg::host.
//
// The one header other folders include for hosts (images have their own:
// inspect/inspect.h). Implemented under inspect/host/; rules.h (the rules'
// shared context) and parsers.h (the probe output parsers) there are
// internal to the library.
//
// inspect --host reads only the profile: read_profile(path) and the
// optional fields of HostProfile (efa_installer_version, libfabric_version,
// ofi_nccl_version, openmpi4/5_version, driver_version, cuda_driver_version,
// kernel, gpu_model, gpu_count, efa_device_count).
#pragma once

#include <chrono>
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

// -------------------------------------------------------------- host rules
// The host rules of domain.md §6 (seed 000 expected results, seed 004 GDS
// judgement); one file per rule under inspect/host/rules/.

/// `--expect gpus=8,efas=8,gpu-model=B200,efa-driver>=3.3.0,kernel=…`.
struct Expectations {
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
Expectations parse_expectations(std::string_view spec);

/// The minimum nvidia-fs version FSx for Lustre needs (seed 004 box).
inline constexpr std::string_view kDefaultMinNvidiaFs = "2.24.2";

// --- rule descriptions (one per file under rules/) ---
const RuleInfo& gpu_count_rule();
const RuleInfo& fabric_manager_rule();
const RuleInfo& efa_driver_rule();
const RuleInfo& efa_device_count_rule();
const RuleInfo& gdrcopy_rule();
const RuleInfo& memlock_rule();
const RuleInfo& nvme_mount_rule();
const RuleInfo& kernel_changed_rule();
const RuleInfo& lustre_client_rule();
const RuleInfo& nvidia_fs_rule();
const RuleInfo& lnet_efa_rule();
const RuleInfo& gdscheck_rule();
const RuleInfo& gds_compat_mode_rule();
const RuleInfo& nccl_log_rule();
const RuleInfo& nccl_tests_rule();

/// Every host rule (domain "host"), in domain.md §6 order.
std::vector<RuleInfo> host_rules();
/// The rules `host check` evaluates on a profile (the first eleven).
std::vector<RuleInfo> profile_rules();

struct HostCheckResult {
  std::vector<Diagnostic> findings;
  std::vector<std::string> notes;
};
/// Runs every profile rule.
HostCheckResult check_host(const HostProfile& p, const Expectations& e, const HostProfile* baseline,
                           const std::string& file, const std::string& baseline_file = {});
/// `host check`'s report before policy (kind "host"): check_host's findings
/// and notes, the profile's facts (text rows and JSON), the inputs `where`
/// and, with a reference profile, `baseline_file`.
Report host_check_report(const HostProfile& p, const Expectations& e, const HostProfile* baseline,
                         const std::string& where, const std::string& baseline_file = {});

// ------------------------------------------------------------------- fleet
// `trainimg fleet check` (issue 12): every node's profile judged with the
// host rules, then the nodes compared with each other. A fact whose value
// differs from the majority's is `fleet-drift` on the outlier node ("n17
// runs kernel 7.0.0-1015-aws, 999 nodes run 7.0.0-1014-aws"); a node that
// gave no profile is `node-unreachable`. How the profiles are gathered
// (srun, a directory) is the caller's business (builder/slurm.h).

inline constexpr std::string_view kFleetSchema = "trainimg.fleet/v1";

const RuleInfo& fleet_drift_rule();
const RuleInfo& node_unreachable_rule();
/// The rules a fleet check evaluates: the profile rules, fleet-drift,
/// node-unreachable.
std::vector<RuleInfo> fleet_rules();

struct FleetNode {
  std::string node;                    ///< Slurm node name (or file name)
  std::string state = "ok";            ///< "ok" or "node-unreachable"
  std::optional<HostProfile> profile;  ///< absent when unreachable
  std::string profile_digest;          ///< sha256 of the profile's facts (equal facts, equal digest)
  std::vector<Diagnostic> findings;    ///< file = node name
};

struct FleetDrift {
  std::string fact;
  std::string majority;  ///< the value most nodes have
  int majority_nodes = 0;
  std::vector<std::pair<std::string, std::string>> outliers;  ///< (node, value)
};

struct FleetResult {
  std::vector<FleetNode> nodes;  ///< in the order given
  std::vector<FleetDrift> drift;
  bool failed() const;  ///< any node has an error finding
};

/// A reachable node: its profile (digest computed here).
FleetNode fleet_node(std::string node, HostProfile profile);
/// A node that gave no profile, and why ("srun: … ", "drained", "timeout").
FleetNode unreachable_node(std::string node, std::string why);

/// Judges every reachable node with check_host (same expectations and
/// baseline for all) and adds fleet-drift findings against the majority.
FleetResult judge_fleet(std::vector<FleetNode> nodes, const Expectations& e,
                        const HostProfile* baseline = nullptr, const std::string& baseline_file = {});

/// Reports. text: a node × rule table, failing groups first, nodes with
/// identical results grouped on one line, then each error/warning and the
/// drift lines. json: trainimg.fleet/v1. junit: one test case per node and
/// rule. sarif: one result per finding, the node as its location.
std::string render_fleet_text(const FleetResult& r);
std::string render_fleet_json(const FleetResult& r);
std::string render_fleet_junit(const FleetResult& r);
std::string render_fleet_sarif(const FleetResult& r);

/// "trainimg: RULE: MESSAGE" of the node's first error: the drain reason
/// (NHC's "NHC: check: message" form). Empty when the node has no error.
std::string drain_reason(const FleetNode& n);
/// Lines "trainimg: RULE: MESSAGE" for every error (the node gate's stderr).
std::vector<std::string> error_lines(const std::vector<Diagnostic>& findings);

// `host diff`: the facts that differ between nodes (seed 000: every node of a
// training job must share one environment).
struct FleetDiff {
  std::vector<std::string> nodes;  ///< column names (hostname, else file name)
  /// Fact name -> one value per node ("-" when unknown), only facts that differ.
  std::vector<std::pair<std::string, std::vector<std::string>>> rows;
  int compared = 0;  ///< number of facts compared
};

/// `profiles` are (label, profile) pairs in command-line order.
FleetDiff diff_profiles(const std::vector<std::pair<std::string, HostProfile>>& profiles);
/// A fixed-width table: "fact  node1  node2 …", one row per differing fact.
std::string render_fleet_table(const FleetDiff& d);
/// `host diff`'s output: the table and a summary line, or with `json` the
/// trainimg.host-diff/v1 document of `inputs` (the files, in order).
std::string render_host_diff(const FleetDiff& d, const std::vector<std::string>& inputs, bool json);

// ----------------------------------------------------------- file checkers
// NCCL_DEBUG=INFO logs (seeds 000, 002), nccl-tests
// tables (seed 000 "Single-node NCCL check"), and GDS (seed 004):
// `gdscheck -p`, nvidia-fs counters and LNet EFA counters before/after gdsio.
// Parsers throw trainimg::Error (line:col) for text that cannot be the tool's
// output; checks return findings.

/// /proc/driver/nvidia-fs/stats: `Key : a=1 b=2` lines as key -> fields, and
/// the versions of the header lines.
struct NvfsStats {
  std::optional<std::string> driver_version;  ///< "NVFS Driver(version: 2.30.2)"
  std::optional<std::string> gds_version;     ///< "GDS Version: 1.19.1.25"
  /// "Mmap" -> {"n": 4, "ok": 4, "err": 0, "munmap": 4}; each with its line.
  struct Counter {
    std::map<std::string, long long> fields;
    int line = 0;
  };
  std::map<std::string, Counter> counters;
};
/// Throws when a `key=value` counter value is not an integer (e.g. "1,024").
NvfsStats parse_nvfs_stats(std::string_view text, const std::string& file);

/// One LNet network interface of `lnetctl net show --net efa [-v]`.
struct LnetNi {
  std::string nid;     ///< "10.0.0.5@efa" (empty for grep'd counter lines)
  std::string status;  ///< "up", "down", or empty
  std::optional<long long> send_count, recv_count;
  int line = 0;
};
/// Accepts the full YAML-like output, its -v form, or only the
/// `send_count:`/`recv_count:` lines that `grep -E` leaves.
std::vector<LnetNi> parse_lnet(std::string_view text, const std::string& file);

// ---------------------------------------------------------------- NCCL log
/// One NCCL process (host:pid) and what it said about the network.
struct NcclProcess {
  std::string host, pid;
  int first_line = 0;
  std::optional<std::string> network;  ///< "Libfabric", "Socket", "IB", …
  int network_line = 0;
  std::optional<std::string> provider;  ///< NET/OFI "Selected provider is efa"
  std::optional<std::string> fabric;
  std::optional<int> nics;  ///< "(found N nics)"
  int provider_line = 0;
};
struct NcclLog {
  std::vector<NcclProcess> processes;  ///< in order of first appearance
  int nccl_lines = 0;
};
NcclLog parse_nccl_log(std::string_view text);
struct CheckOutput {
  std::vector<Diagnostic> findings;
  std::vector<std::string> notes;
  std::vector<std::pair<std::string, std::string>> text_facts;
  nlohmann::ordered_json facts;
};
CheckOutput check_nccl_log(const NcclLog& log, std::string_view text, const std::string& file,
                           std::optional<int> expect_nics);
/// `trainimg check nccl-log FILE` ('-' = stdin): reads, parses and checks
/// it; the report of kind "nccl-log" before policy. Throws Error for an
/// unreadable file.
Report nccl_log_report(const std::string& file, std::optional<int> expect_nics);
/// `trainimg check nccl-tests FILE`: the report of kind "nccl-tests" before
/// policy. Throws Error for a negative baseline, a ratio outside (0, 1], or
/// a file that cannot be nccl-tests output.
Report nccl_tests_report(const std::string& file, std::optional<double> baseline_busbw, double min_ratio);

// -------------------------------------------------------------- nccl-tests
struct NcclTestsRow {
  long long size = 0;
  long long count = 0;
  double oop_busbw = 0, ip_busbw = 0;            ///< out-of-place / in-place GB/s (0 if the column is absent)
  std::optional<long long> oop_wrong, ip_wrong;  ///< nullopt for "N/A" (-c 0)
  int line = 0;
};
struct NcclTests {
  std::vector<NcclTestsRow> rows;
  std::optional<long long> out_of_bounds;  ///< "# Out of bounds values : N"
  int out_of_bounds_line = 0;
  std::optional<double> avg_busbw;  ///< "# Avg bus bandwidth : X"
  bool truncated_row = false;       ///< the last line was a cut-off row
  int truncated_line = 0;
};
/// Throws for a row whose column count differs from the header (unless it is
/// the file's last line: a cut-off run), or a number written with ','.
NcclTests parse_nccl_tests(std::string_view text, const std::string& file);
CheckOutput check_nccl_tests(const NcclTests& t, std::string_view text, const std::string& file,
                             std::optional<double> baseline_busbw, double min_ratio);

// --------------------------------------------------------------------- GDS
struct GdscheckReport {
  std::optional<std::string> nvidia_fs_version, nvidia_fs_min;
  int version_line = 0;
  std::optional<std::string> exascaler;  ///< "nvfs, compat"
  int exascaler_line = 0;
  struct GpuLine {
    int index = 0;
    bool supports_gds = false;
    int line = 0;
  };
  std::vector<GpuLine> gpus;
  std::optional<std::string> iommu;  ///< "disabled"
  int iommu_line = 0;
  std::string last_line;
  int last_line_no = 0;
  std::optional<std::string> cuda_driver;  ///< "Cuda Driver Version Installed: 13020"
};
GdscheckReport parse_gdscheck(std::string_view text);
void check_gdscheck(const GdscheckReport& g, std::string_view text, const std::string& file,
                    const std::string& min_nvidia_fs, CheckOutput& out);

enum class GdsMode { GdsWrite, GdsRead, Cpu };
/// "gds-write" | "gds-read" | "cpu"; throws Error otherwise.
GdsMode parse_gds_mode(std::string_view s);
/// Judges the nvidia-fs counters before/after a gdsio run (gds-compat-mode),
/// showing the arithmetic ("Sparse Reads n 0 → 10240 (+10240 = 10 GiB / 1 MiB)").
void check_gds_counters(const NvfsStats& before, const NvfsStats& after, const std::string& before_file,
                        const std::string& after_file, GdsMode mode, long long io_size_bytes,
                        CheckOutput& out);
/// nvidia-fs version (from the stats file, else gdscheck's two-part one) vs minimum.
void check_nvidia_fs_version(const std::optional<std::string>& version, bool two_part_only,
                             const std::string& file, const std::string& min, CheckOutput& out);
/// `lnetctl net show --net efa`: @efa count vs expected and every NI up.
void check_lnet_interfaces(const std::vector<LnetNi>& nis, const std::string& file,
                           std::optional<int> expect_efas, CheckOutput& out);
/// send/recv counters before/after: same interface count, and (after a GDS
/// run) at least one interface carried FSx traffic.
void check_lnet_counters(const std::vector<LnetNi>& before, const std::vector<LnetNi>& after,
                         const std::string& after_file, std::optional<int> expect_efas, bool expect_traffic,
                         CheckOutput& out);

/// `trainimg gds check`'s inputs (seed 004): saved outputs, or `live`.
struct GdsInputs {
  bool live = false;  ///< run gdscheck -p, read nvidia-fs stats, run lnetctl here
  std::string gdscheck, stats_before, stats_after, mode, lnet, lnet_before, lnet_after;
  int expect_efas = 0;  ///< 0: not checked
  std::string min_nvidia_fs = std::string(kDefaultMinNvidiaFs);
  std::string io_size = "1M";
  double timeout = 60;  ///< seconds per live command
};
/// Checks the combination (throws Error naming the flag: nothing to check,
/// a half pair, --live with a file, a bad --io-size or --mode), reads the
/// files or runs the live probes (an absent tool is a finding), and judges
/// them: the report of kind "gds" before policy. The nvidia-fs version
/// judged is the live stats', else --stats-after's, else gdscheck's.
Report check_gds(const GdsInputs& in);

/// Formats a byte count as the seeds do: "10 GiB", "1 MiB", "1536 KiB".
std::string format_bytes(long long bytes);

}  // namespace trainimg::host
