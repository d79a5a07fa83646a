// SPDX-License-Identifier: GPL-3.0-or-later
// The host rules of domain.md §6 (seed 000 expected results, seed 004 GDS
// judgement). One file per rule under inspect/host/rules/; this header is
// their shared contract and the explicit list (no self-registration).
#pragma once

#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "common/diagnostic.h"
#include "inspect/host/profile.h"

namespace trainimg::host {

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

/// What every rule sees.
struct HostContext {
  const HostProfile& profile;
  const Expectations& expect;
  const HostProfile* baseline = nullptr;  ///< --baseline reference node
  std::string file;                       ///< the profile's path (finding location)
  std::string baseline_file;
  std::vector<Diagnostic>* findings;
  std::vector<std::string>* notes;

  /// Adds a finding (built with Finding, `in(file)`).
  void add(Diagnostic d) const { findings->push_back(std::move(d)); }
  void note(std::string text) const { notes->push_back(std::move(text)); }
  /// "absent: command not found: lfs" / "failed: …" / "timeout", for messages.
  std::string probe_state(const std::string& id) const;
  bool probe_ok(const std::string& id) const;
  /// The probe `id` was not captured (status absent: tool missing, file not
  /// in the bundle) and neither --strict nor an --expect key naming `rule`
  /// asks for it: adds an info finding "cannot tell: …" and returns true,
  /// so the rule judges nothing. A probe that ran and failed is judged.
  bool cannot_tell(const RuleInfo& rule, const std::string& id) const;
  /// GDS is in use: --expect gds=yes / nvidia-fs>=V, or nvidia_fs loaded on
  /// a node that uses Lustre (gds=no turns it off).
  bool gds_in_use() const;
  /// Lustre is in use: --expect lustre=yes, a lustre mount in /proc/mounts,
  /// the lustre module, LNet EFA interfaces, or the FSx EFA service active.
  bool lustre_in_use() const;
  /// With a baseline: reports `rule` when `what` differs from the baseline
  /// node's value ("versions drifted"). Unknown on either side is a note.
  void drift(const RuleInfo& rule, const std::string& what, const std::optional<std::string>& mine,
             const std::optional<std::string>& base) const;
};

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

// --- the profile rules ---
void check_gpu_count(const HostContext& c);
void check_fabric_manager(const HostContext& c);
void check_efa_driver(const HostContext& c);
void check_efa_device_count(const HostContext& c);
void check_gdrcopy(const HostContext& c);
void check_memlock(const HostContext& c);
void check_nvme_mount(const HostContext& c);
void check_kernel_changed(const HostContext& c);
void check_lustre_client(const HostContext& c);
void check_nvidia_fs(const HostContext& c);
void check_lnet_efa(const HostContext& c);

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

}  // namespace trainimg::host
