// SPDX-License-Identifier: GPL-3.0-or-later
// The host rules of domain.md §6 (seed 000 expected results, seed 004 GDS
// judgement). One constant per rule, each in its own file under
// inspect/host/rules/, listed once in inspect/host/rules/rules.def; this
// header is their shared contract (internal to the host library). The public
// part (profile_rules(), host_rules(), check_host()) is in inspect/host.h.
#pragma once

#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "common/diagnostic.h"
#include "inspect/host.h"
#include "inspect/host/checkers.h"
#include "inspect/host/fleet.h"

namespace trainimg::host {

/// What every rule sees.
struct HostContext {
  const HostProfile& profile;
  const HostExpectations& expect;
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

/// A profile rule: its description and its check, which reads the context
/// and adds findings of `rule` (its own info).
struct HostRule {
  RuleInfo info;
  void (*check)(const RuleInfo& rule, const HostContext& c);
};

/// The profile rules `host check` runs, in rules.def order.
const std::vector<const HostRule*>& all_host_rules();

/// The saved or live tool output a text rule reads; the checker that reads
/// it runs every TEXT_RULE of that source.
enum class TextSource {
  NcclLog,       ///< `check nccl-log`: an NCCL_DEBUG=INFO log
  NcclTests,     ///< `check nccl-tests`: an nccl-tests table
  Gdscheck,      ///< `gds check`: `gdscheck -p` (--gdscheck FILE or --live)
  NvfsCounters,  ///< `gds check`: nvidia-fs stats before/after (--stats-before/--stats-after)
};

/// What every text rule sees: the checker fills in the part of its source
/// (the other parts stay empty).
struct TextInput {
  std::string file;       ///< the text's name (finding location)
  std::string_view text;  ///< the text itself (the caret's lines)
  // TextSource::NcclLog
  const NcclLog* nccl_log = nullptr;
  std::optional<int> expect_nics;  ///< --expect-nics
  // TextSource::NcclTests
  const NcclTests* nccl_tests = nullptr;
  std::optional<double> baseline_busbw;  ///< --baseline-busbw
  double min_ratio = 0.9;                ///< --min-ratio
  // TextSource::Gdscheck
  const GdscheckReport* gdscheck = nullptr;  ///< null: --live could not run gdscheck (a finding says so)
  std::string min_nvidia_fs = std::string(kDefaultMinNvidiaFs);
  // TextSource::NvfsCounters (file is the after file)
  const NvfsStats* stats_before = nullptr;
  const NvfsStats* stats_after = nullptr;
  std::string before_file;
  GdsMode mode = GdsMode::GdsWrite;
  long long io_size = 0;  ///< bytes per gdsio I/O (--io-size)
};

/// A rule of a text checker: its description, the source it reads, and its
/// check, which adds findings of `rule` (its own info) and facts to `out`.
struct TextRule {
  RuleInfo info;
  TextSource source;
  void (*check)(const RuleInfo& rule, const TextInput& in, CheckOutput& out);
};

/// The TEXT_RULEs, in rules.def order.
const std::vector<const TextRule*>& all_text_rules();
/// Runs every TEXT_RULE of `source` on `in` in rules.def order: their infos
/// are appended to `rules` (the report's evaluated rules), their findings,
/// notes and facts to `out`.
void run_text_rules(TextSource source, const TextInput& in, std::vector<RuleInfo>& rules, CheckOutput& out);

/// What every fleet rule sees: the nodes of `fleet check` after the profile
/// rules judged each reachable one (their findings are in the nodes).
struct FleetContext {
  std::vector<FleetNode>& nodes;  ///< in the order given; a finding goes to its node
  FleetResult& result;            ///< fleet-wide results (drift rows)
};

/// A rule of `fleet check`: its description and its judgement of the nodes
/// together, which adds findings of `rule` (its own info) to the nodes.
struct FleetRule {
  RuleInfo info;
  void (*judge)(const RuleInfo& rule, FleetContext& c);
};

/// The FLEET_RULEs `judge_fleet` runs, in rules.def order.
const std::vector<const FleetRule*>& all_fleet_rules();

// The constants of rules.def.
#define HOST_RULE(name) extern const HostRule name;
#define TEXT_RULE(name) extern const TextRule name;
#define FLEET_RULE(name) extern const FleetRule name;
#include "inspect/host/rules/rules.def"

}  // namespace trainimg::host
