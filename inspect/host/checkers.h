// SPDX-License-Identifier: GPL-3.0-or-later
// The file checkers: NCCL_DEBUG=INFO logs (seeds 000, 002), nccl-tests
// tables (seed 000 "Single-node NCCL check"), and GDS (seed 004):
// `gdscheck -p`, nvidia-fs counters and LNet EFA counters before/after gdsio.
// Parsers throw trainimg::Error (line:col) for text that cannot be the tool's
// output; checks return findings.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/diagnostic.h"
#include "inspect/host/parsers.h"

namespace trainimg::host {

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

// -------------------------------------------------------------- nccl-tests
struct NcclTestsRow {
  long long size = 0;
  long long count = 0;
  double oop_busbw = 0, ip_busbw = 0;  ///< out-of-place / in-place GB/s (0 if the column is absent)
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
                        const std::string& after_file, GdsMode mode, long long io_size_bytes, CheckOutput& out);
/// nvidia-fs version (from the stats file, else gdscheck's two-part one) vs minimum.
void check_nvidia_fs_version(const std::optional<std::string>& version, bool two_part_only, const std::string& file,
                             const std::string& min, CheckOutput& out);
/// `lnetctl net show --net efa`: @efa count vs expected and every NI up.
void check_lnet_interfaces(const std::vector<LnetNi>& nis, const std::string& file, std::optional<int> expect_efas,
                           CheckOutput& out);
/// send/recv counters before/after: same interface count, and (after a GDS
/// run) at least one interface carried FSx traffic.
void check_lnet_counters(const std::vector<LnetNi>& before, const std::vector<LnetNi>& after,
                         const std::string& after_file, std::optional<int> expect_efas, bool expect_traffic,
                         CheckOutput& out);

/// Formats a byte count as the seeds do: "10 GiB", "1 MiB", "1536 KiB".
std::string format_bytes(long long bytes);
/// Parses "1M", "10G", "4096", "1MiB"; nullopt otherwise.
std::optional<long long> parse_size(std::string_view s);

}  // namespace trainimg::host
