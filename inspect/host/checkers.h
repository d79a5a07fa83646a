// SPDX-License-Identifier: GPL-3.0-or-later
// The text checkers of the host library: `trainimg check nccl-log`,
// `check nccl-tests` and `gds check` judge saved tool output (or, for GDS,
// run the tools). A public header of the host library; the parsers are in
// nccl_log.cc, nccl_tests.cc and gds.cc, the checks with their rules under
// rules/, the reports in host_report.cc and gds_check.cc.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/diagnostic.h"
#include "common/report.h"

namespace trainimg::host {

/// The minimum nvidia-fs version FSx for Lustre needs (seed 004 box); also
/// the nvidia-fs host rule's default.
inline constexpr std::string_view kDefaultMinNvidiaFs = "2.24.2";

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
  /// The network of its first "Channel … via NET/<name>/…" line: what a log
  /// cut before "Using network" still shows.
  std::optional<std::string> channel_network;
  int channel_line = 0;
  std::optional<std::string> provider;  ///< NET/OFI "Selected provider is efa"
  std::optional<std::string> fabric;
  std::optional<int> nics;  ///< "(found N nics)"
  int provider_line = 0;
};
struct NcclLog {
  std::vector<NcclProcess> processes;  ///< in order of first appearance
  int nccl_lines = 0;
  /// Lines without the "host:pid:tid [dev]" prefix (all one process "?:?").
  int unprefixed_lines = 0;
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
  /// `#wrong` cells read, and those that were "N/A" (results not checked: -c 0).
  int wrong_cells = 0, wrong_na = 0;
  /// The first "Test NCCL failure …" / "Test CUDA failure …" line (the run aborted).
  std::string failure;
  int failure_line = 0;
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

}  // namespace trainimg::host
