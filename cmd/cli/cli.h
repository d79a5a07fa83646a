// SPDX-License-Identifier: GPL-3.0-or-later
// trainimg_cli: what every subcommand file in cmd/ shares, so that each one
// only declares its flags and calls one function. The report path
// (run_check) is the one way a checking command (lint, inspect, host check,
// gds check, check nccl-*, fleet check) loads its policy, resolves --fail-on,
// applies the policy, renders, writes and picks its exit code.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "common/policy/policy.h"
#include "common/report.h"
#include "inspect/host/fleet.h"
#include "inspect/sources/source.h"

namespace trainimg::cmd {

/// What a subcommand runs once its flags are parsed: the exit code.
using Runner = std::function<int()>;
/// Declares a subcommand's flags on `sub` and sets `run`.
using Setup = void (*)(CLI::App& sub, Runner& run);

struct Command {
  const char* name;
  const char* summary;
  Setup setup;
};

/// Adds one CLI11 subcommand per entry of `table` to `parent` and returns
/// the runner of whichever one the command line chose. A parent given
/// `require_one` needs exactly one of them (host, check, gds, fleet).
/// The result, once called, runs the chosen subcommand; it returns kExitUsage
/// (after printing the parent's help) when none was chosen.
Runner add_commands(CLI::App& parent, std::span<const Command> table, bool require_one = true);

/// Runs `run`, the one place where a stopping Error becomes its rendered
/// message on stderr and exit 2, and an interrupted build or import exits
/// 128+N with its message.
int run_guarded(const Runner& run);

/// --platform, --cache, --no-cache, --max-connections for commands that
/// read docker:// sources; source_options() validates them and gives what
/// open_source() takes.
struct SourceFlags {
  std::string platform, cache;
  bool no_cache = false;
  unsigned max_connections = 0;
};
void add_source_flags(CLI::App& sub, const std::shared_ptr<SourceFlags>& f);
/// Throws Error for a --platform that is not OS/ARCH[/VARIANT].
inspect::SourceOptions source_options(const SourceFlags& f);

/// Policy (docs/policy.md): --config FILE | --no-config (else the nearest
/// .trainimg.yaml), --baseline FILE, --write-baseline FILE, --show-suppressed.
struct PolicyFlags {
  std::string config, baseline, write_baseline;
  bool no_config = false;
  bool show_suppressed = false;
};
/// The config the flags select, validated against the rule catalogue;
/// an empty Policy with --no-config or when none is found. Throws Error.
policy::Policy load_policy(const PolicyFlags& f);
/// --fail-on when given (non-empty), else the config's fail-on, else error.
FailOn resolve_fail_on(const std::string& flag, const policy::Policy& p);
/// Applies the config to `r`, then --write-baseline (writes FILE, returns
/// true: the command exits 0) or --baseline (findings become the new ones).
/// Throws Error for an unreadable baseline or both flags at once.
bool apply_policy_flags(Report& r, const PolicyFlags& f, const policy::Policy& p,
                        const policy::Sources* sources = nullptr);

/// The flags of every checking command: --format, --fail-on, -o/--output
/// and the policy flags.
struct ReportFlags {
  std::string format = "text";
  std::string fail_on;  ///< empty: the config's, else error
  std::string output;   ///< empty or "-": standard output
  PolicyFlags policy;
};

/// Which of the report flags a command declares: all of them, but a
/// command whose --baseline means something else declares that one itself
/// (host check, fleet check: a reference node's profile), and the fleet
/// reports have no place for suppressed findings or a findings baseline.
struct ReportFlagSet {
  bool baseline = true;        ///< --baseline FILE (accepted findings)
  bool write_baseline = true;  ///< --write-baseline FILE
  bool show_suppressed = true;
  std::string formats = "text, json, sarif or junit";
};
/// Declares --format, --fail-on, -o/--output, --config, --no-config and the
/// chosen policy flags on `sub`.
void add_report_flags(CLI::App& sub, const std::shared_ptr<ReportFlags>& f, const ReportFlagSet& set = {});

/// What a check produced, before policy: a Report (most commands) or the
/// fleet's per-node results. The report path calls these in order.
class Outcome {
 public:
  virtual ~Outcome() = default;
  /// The config, then --write-baseline / --baseline; true when a baseline
  /// was written (the command then exits 0).
  virtual bool apply_policy(const policy::Policy& p, const PolicyFlags& f) = 0;
  virtual std::string render(Format format, bool color) const = 0;
  virtual int exit_code(FailOn fail_on) const = 0;
  /// After the report is written (fleet check --drain).
  virtual void finish() {}
};

/// A Report as an Outcome.
struct Checked : Outcome {
  Report report;
  /// The inputs by name: carets in text, fingerprints in baselines (lint).
  const policy::Sources* sources = nullptr;
  /// A findings baseline the command recognised itself (host check: its
  /// --baseline names a profile or accepted findings); used over the flag.
  std::string baseline;
  /// Runs after the policy: what no config may suppress (lint's refusals).
  std::function<void(Report&)> after_policy;

  explicit Checked(Report r) : report(std::move(r)) {}
  bool apply_policy(const policy::Policy& p, const PolicyFlags& f) override;
  std::string render(Format format, bool color) const override;
  int exit_code(FailOn fail_on) const override;
};

/// fleet check's per-node results (inspect/host/fleet.h) as an Outcome: the
/// policy applies per node (an expired ignore is said once, on stderr);
/// no findings baseline. Exit 1 when a node has a finding at or above
/// --fail-on (default error: a node with an error). With `drain`, finish()
/// drains each judged node that has an error (Reason="trainimg: RULE:
/// MESSAGE"), saying so on stderr.
struct FleetOutcome : Outcome {
  host::FleetResult result;
  bool drain = false;

  explicit FleetOutcome(host::FleetResult r);
  bool apply_policy(const policy::Policy& p, const PolicyFlags& f) override;
  std::string render(Format format, bool color) const override;
  int exit_code(FailOn fail_on) const override;
  void finish() override;
};

/// The flags checked before anything is read: bad usage costs nothing.
struct ReportPlan {
  Format format;
  policy::Policy policy;
  FailOn fail_on;
};
/// Throws Error for a bad --format, --fail-on or config.
ReportPlan plan_report(const ReportFlags& f);

/// The report path: plan_report, then `check(policy)`, then the policy,
/// the rendering (to standard output, or -o FILE written atomically), and
/// the exit code: 0, or 1 for findings at or above --fail-on; 0 after
/// --write-baseline. Errors propagate (exit 2, nothing written).
int run_check(const ReportFlags& f,
              const std::function<std::unique_ptr<Outcome>(const policy::Policy&)>& check);

// ---------------------------------------- the rule catalogue (rule_catalogue.cc)
// The one list of rules: every library's descriptors, kind by kind, and the
// markdown table the README and docs/*.md hold for each kind.

/// Every rule of every library: dockerfile, recipe, image, host, fleet, in
/// that order, each library's list in its own catalogue order.
std::vector<RuleInfo> rule_catalogue();

/// The kinds, in catalogue order.
std::vector<std::string> rule_kinds();

/// `| id | severity | fires when | fix |` with one row per rule, in the
/// given order ('|' in a cell escaped). What sits between
/// `<!-- rules:KIND begin -->` and `<!-- rules:KIND end -->` in the docs.
std::string rules_markdown(const std::vector<RuleInfo>& rules);

}  // namespace trainimg::cmd
