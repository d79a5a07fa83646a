// SPDX-License-Identifier: GPL-3.0-or-later
// Parsers for the raw outputs of the host probes (seed 000 host validation,
// seed 004 GDS). Each takes the text exactly as the tool printed it (CRLF and
// a missing final newline accepted) and the name to use in errors. Output a
// tool could print is never an error; text that cannot be one of its outputs
// (wrong column count, a number that is not a number) throws trainimg::Error
// with the line and column.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "inspect/host.h"
#include "inspect/host/checkers.h"  // NvfsStats, parse_nvfs_stats, LnetNi, parse_lnet

namespace trainimg::host {

/// Lines without their terminators ("\n" or "\r\n"); a final empty line is dropped.
std::vector<std::string_view> split_lines(std::string_view text);
std::string_view trim(std::string_view s);
/// Throws trainimg::Error "file:line:col: message" showing `line_text`.
[[noreturn]] void fail_at(const std::string& file, int line, int column, std::string_view line_text,
                          const std::string& message, const std::string& hint = {});
/// `line` without the labels launchers put in front of each output line:
/// srun --label ("0: ", " 12: ") and mpirun --tag-output ("[1,0]<stdout>:"),
/// repeated. Returns a view into `line`.
std::string_view strip_label(std::string_view line);
/// Parses a whole-string decimal integer (sign allowed); nullopt otherwise.
std::optional<long long> to_int(std::string_view s);

/// `nvidia-smi --query-gpu=index,name,driver_version --format=csv` (header
/// optional, `noheader` accepted). Throws on a row whose column count is not 3.
std::vector<Gpu> parse_nvidia_smi_csv(std::string_view text, const std::string& file);
/// "CUDA Version: 13.2" from the banner of plain `nvidia-smi` (or `-q`).
std::optional<std::string> parse_nvidia_smi_cuda_version(std::string_view text);

/// The `version:` field of `modinfo efa` (e.g. "3.3.0" or "2.13.0g").
std::optional<std::string> parse_modinfo_version(std::string_view text);

struct EfaManifest {
  std::optional<std::string> installer_version;  ///< "# EFA installer version: 1.50.0"
  std::map<std::string, std::string> packages;   ///< name -> version as written
  std::optional<std::string> libfabric, ofi_nccl, openmpi4, openmpi5, pmix;  ///< release_of
};
/// /opt/amazon/efa_installed_packages: `#` header lines, then package names
/// with versions (`name_version_arch[.deb]`, `name-version-rel.arch[.rpm]`,
/// space or line separated).
EfaManifest parse_efa_manifest(std::string_view text);

struct InfinibandDevices {
  std::vector<std::string> all;
  std::vector<std::string> efa;       ///< rdmap*
  std::vector<std::string> connectx;  ///< mlx5_*, ibp* (ConnectX-7, ignored)
  std::vector<std::string> other;
  /// The output was a number alone: seed 000's `ls … | grep -c rdmap`.
  std::optional<int> counted;
};
/// `ls /sys/class/infiniband/` (names separated by whitespace; `ls -l`
/// lines give the name before ` -> `).
InfinibandDevices parse_infiniband(std::string_view text);

/// The distinct devices behind the `domain:` values of `fi_info -p efa -t
/// FI_EP_RDM`, sorted ("rdmap79s0-rdm" and "rdmap79s0" are one device).
std::vector<std::string> parse_fi_info_domains(std::string_view text);

/// Module names of `lsmod` (header skipped).
std::vector<std::string> parse_lsmod(std::string_view text);
/// `ls -l /dev/gdrdrv`: true when it lists a character device.
bool parse_ls_char_device(std::string_view text);
/// `ulimit -l`: "unlimited" or a number of KiB; throws otherwise.
std::string parse_ulimit(std::string_view text, const std::string& file);

struct DfRow {
  std::string filesystem, size, used, avail, use_percent, mounted_on;
};
/// `df -h PATH`: the data row (a long filesystem name wrapped onto its own
/// line is joined back). Throws when the row does not have 6 fields.
DfRow parse_df(std::string_view text, const std::string& file);

/// First non-empty line, trimmed (uname -r, systemctl is-active).
std::optional<std::string> first_line(std::string_view text);
/// `apt-mark showhold`: one package per line.
std::vector<std::string> parse_showhold(std::string_view text);
/// Whether the held packages include the kernel: a `linux-image*`,
/// `linux-modules*` or `linux-aws*` package.
bool kernel_is_held(const std::vector<std::string>& held);
/// Whether an NCCL `Using network NAME` is the aws-ofi-nccl plugin:
/// "Libfabric", "AWS Libfabric" (1.11.0 and earlier, or NCCL_NET="AWS
/// Libfabric") or "OFI" (NCCL_NET=OFI).
bool is_libfabric(std::string_view network);

/// `lfs --version` ("lfs 2.15.6").
std::optional<std::string> parse_lfs_version(std::string_view text);

}  // namespace trainimg::host
