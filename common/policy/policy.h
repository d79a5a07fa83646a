// SPDX-License-Identifier: GPL-3.0-or-later
// Policy, as CI users of hadolint and trivy expect it (issue 14): a
// `.trainimg.yaml` (rules to disable, severity overrides, paths to exclude,
// ignores with a reason and an expiry date, the failure threshold, the
// host's versions, NGC bases) and baselines of accepted findings. Policy is
// applied once, to a finished Report, after the rules ran, as hadolint
// applies its pragmas: every checking command (lint, inspect, host check,
// gds check, check nccl-*, fleet check) goes through apply_policy().
// docs/policy.md describes the file and the flags.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/diagnostic.h"
#include "common/report.h"
#include "common/source_file.h"

namespace trainimg::policy {

/// The config file's own name, looked up by find_config().
inline constexpr const char* kConfigName = ".trainimg.yaml";
/// The "schema" of a baseline file.
inline constexpr const char* kBaselineSchema = "trainimg.baseline/v1";

/// A place in the config file (for messages: "FILE:LINE:COL").
struct Place {
  std::string file;
  int line = 0;
  int column = 0;
  std::string location() const;
};

/// One `ignore:` entry.
struct Ignore {
  std::string id;
  std::string path;   ///< glob; empty: every file
  std::string until;  ///< YYYY-MM-DD, the last day the ignore holds; empty: no expiry
  std::string reason;
  Place at;               ///< the entry in the config file
  std::string line_text;  ///< the config's line at `at` (the expiry warning's caret)
};

struct Policy {
  std::string file;  ///< the config as named in messages; empty: no config
  std::string root;  ///< the config's directory: globs are relative to it
  std::vector<std::pair<std::string, Place>> disable;
  std::map<std::string, std::pair<Severity, Place>> severity;
  std::vector<std::pair<std::string, Place>> exclude_paths;
  std::optional<FailOn> fail_on;
  /// `expect:` in file order: efa-installer, libfabric, aws-ofi-nccl, cuda-driver.
  std::vector<std::pair<std::string, std::string>> expect;
  std::vector<std::string> ngc_bases;
  std::vector<Ignore> ignores;
};

/// The policy rules (kind "policy": rules about the config itself, run by
/// apply_policy; common/policy/rules.def), in catalogue order. Static
/// storage: views of its strings stay valid.
const std::vector<RuleInfo>& policy_rules();
/// Whether `rule_id` is a policy rule's: its findings are about the config,
/// not about what was checked.
bool is_policy_rule(std::string_view rule_id);

/// The nearest `.trainimg.yaml` in `dir` or a parent, stopping after the
/// first directory that contains `.git` (the repository's root); empty
/// when there is none.
std::string find_config(const std::string& dir);

/// Reads and validates a config. `catalogue` is every known rule (ids are
/// checked against it and policy_rules()). Throws trainimg::Error,
/// positioned at FILE:LINE:COL with a did-you-mean where one is close, for
/// malformed YAML, an unknown key, an unknown rule id, a bad severity,
/// fail-on, date or version, or an ignore without id or reason.
Policy load_policy(const std::string& path, const std::vector<RuleInfo>& catalogue);
/// As load_policy, for text in memory named `name`.
Policy parse_policy(const SourceFile& src, const std::vector<RuleInfo>& catalogue);

/// Today's date in UTC, YYYY-MM-DD.
std::string today_utc();

/// Applies `p` to `r` (its `rules` are the ones this run evaluated):
/// findings excluded by path, disabled, or ignored (unexpired) move to
/// r.suppressed with the reason; each expired ignore of an evaluated rule
/// adds a policy-ignore-expired warning at the entry; severity overrides
/// change the findings and r.rules. `today` is YYYY-MM-DD.
void apply_policy(Report& r, const Policy& p, const std::string& today);

/// Whether `file` (a path or image path) matches the glob `pattern`
/// (fnmatch, '*' also matches '/', a directory matches everything under
/// it), tried as given and relative to `root`.
bool path_matches(const std::string& pattern, const std::string& file, const std::string& root);

// --- baselines ---

/// The source line text of each finding's file, when it is known.
using Sources = std::map<std::string, const SourceFile*>;

/// A finding's fingerprint: a hash of its rule id, file, image path,
/// source line and message with whitespace collapsed and line/column
/// numbers removed, so it survives lines inserted above it.
std::string fingerprint(const Diagnostic& d, const Sources* sources = nullptr);

struct BaselineEntry {
  std::string rule, file, fingerprint, message, path;
  Severity severity = Severity::Error;
  int line = 0;
  int column = 0;
};
struct Baseline {
  std::string file;
  std::vector<BaselineEntry> entries;
};

/// The trainimg.baseline/v1 JSON of r.findings (pretty, trailing newline).
std::string baseline_json(const Report& r, const Sources* sources = nullptr);
/// Reads a baseline. Throws trainimg::Error (positioned) when the file is
/// unreadable, not JSON, or not trainimg.baseline/v1.
Baseline read_baseline(const std::string& path);
/// The "schema" string of a JSON file, or "" when it has none or is not
/// JSON (the caller reports that). Throws Error when unreadable.
std::string json_schema_of(const std::string& path);
/// Findings whose fingerprint is in `b` (each entry matches once) move to
/// r.suppressed (by "baseline"); entries matched by nothing become
/// r.baseline->absent. The remaining findings are the new ones.
void apply_baseline(Report& r, const Baseline& b, const Sources* sources = nullptr);

}  // namespace trainimg::policy
