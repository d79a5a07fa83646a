// SPDX-License-Identifier: GPL-3.0-or-later
// nvidia-fs: seed 004 §1 (module loaded, NVFS Driver version at or above the
// minimum; 2.24.2 for FSx for Lustre).
#include "common/version.h"
#include "inspect/host/parsers.h"
#include "inspect/host/rules.h"

namespace trainimg::host {

namespace {

void check(const RuleInfo& rule, const HostContext& c) {
  const auto& p = c.profile;
  if (!c.gds_in_use()) {
    c.note(
        "nvidia-fs: not checked (GDS not in use: no nvidia_fs with Lustre; pass --expect gds=yes or "
        "nvidia-fs>=V)");
    return;
  }
  std::string min = c.expect.nvidia_fs_min.value_or(std::string(kDefaultMinNvidiaFs));
  if (!p.nvidia_fs_loaded.value_or(false)) {
    if (!p.nvidia_fs_loaded && c.cannot_tell(rule, "lsmod.txt")) return;
    c.add(Finding(rule, p.nvidia_fs_loaded
                            ? "nvidia_fs is not loaded (not in lsmod)"
                            : "cannot tell whether nvidia_fs is loaded (" + c.probe_state("lsmod.txt") + ")")
              .in(c.file));
    return;
  }
  if (!p.nvidia_fs_version) {
    if (!c.cannot_tell(rule, "nvidia-fs-stats.txt"))
      c.add(Finding(rule, "nvidia_fs is loaded but its version is unknown (" +
                              c.probe_state("nvidia-fs-stats.txt") + ")")
                .in(c.file));
  } else if (compare_versions(*p.nvidia_fs_version, min) < 0) {
    c.add(Finding(rule, "nvidia-fs " + *p.nvidia_fs_version + " is below the minimum " + min).in(c.file));
  }
  if (c.baseline) c.drift(rule, "nvidia-fs", p.nvidia_fs_version, c.baseline->nvidia_fs_version);
}

}  // namespace

const HostRule kNvidiaFs{
    {"nvidia-fs", Severity::Error,
     "GDS in use (`gds=yes`/`nvidia-fs>=`, or nvidia_fs loaded on a node that uses Lustre) and the "
     "nvidia-fs module is missing, its version unknown, or below the minimum (2.24.2 for FSx)",
     "sudo modprobe nvidia_fs; if missing or too old build it from NVIDIA/gds-nvidia-fs "
     "(NVFS_MAX_PEER_DEVS=128 NVFS_MAX_PCI_DEPTH=16 make; insmod) and bake it into the AMI",
     "seed 004 §1 Verify the GDS driver (nvidia-fs)", "host", "docs/host.md#rules"},
    check};

}  // namespace trainimg::host

namespace trainimg::host {

void check_nvidia_fs_version(const std::optional<std::string>& version, bool two_part_only,
                             const std::string& file, const std::string& min, CheckOutput& out) {
  out.text_facts.emplace_back("nvidia-fs version", version.value_or("?") + " (minimum " + min + ")");
  if (!version) {
    out.findings.push_back(
        Finding(kNvidiaFs.info, "no nvidia-fs version (`NVFS Driver(version: …)`)").in(file));
    return;
  }
  std::string m = min;
  if (two_part_only) {  // gdscheck and /proc/driver/nvidia-fs/version show two parts only
    size_t second = m.find('.', m.find('.') + 1);
    if (second != std::string::npos) m = m.substr(0, second);
  }
  if (compare_versions(*version, m) < 0)
    out.findings.push_back(
        Finding(kNvidiaFs.info, "nvidia-fs " + *version + " is below the minimum " + min).in(file));
}

}  // namespace trainimg::host
