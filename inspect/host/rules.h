// SPDX-License-Identifier: GPL-3.0-or-later
// The host rules of domain.md §6 (seed 000 expected results, seed 004 GDS
// judgement). One file per rule under inspect/host/rules/; this header is
// their shared contract (internal to the host library). The public part,
// the explicit list (no self-registration) and check_host(), is in
// inspect/host.h.
#pragma once

#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "common/diagnostic.h"
#include "inspect/host.h"

namespace trainimg::host {

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

/// A finding of `rule` in `file` at its 1-based `line` (0: the file as a
/// whole); `lines` are the file's lines (split_lines): a line among them also
/// gets column 1 and its text, for the caret.
Diagnostic line_finding(const RuleInfo& rule, std::string message, const std::string& file,
                        const std::vector<std::string_view>& lines, int line);

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

}  // namespace trainimg::host
