// SPDX-License-Identifier: GPL-3.0-or-later
// What every checking command (lint, inspect, host check, gds check, check
// nccl-*) produces, and its four renderings. Each renderer is its own file:
// report_text.cc, report_json.cc, report_sarif.cc, report_junit.cc.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "common/diagnostic.h"
#include "common/source_file.h"

namespace trainimg {

/// Exit codes shared by every subcommand.
enum ExitCode : int {
  kExitOk = 0,        ///< no finding at or above --fail-on
  kExitFindings = 1,  ///< findings at or above --fail-on
  kExitUsage = 2,     ///< usage error or unreadable input
};

enum class FailOn { Error, Warning, Never };
/// "error" | "warning" | "never"; throws Error otherwise.
FailOn parse_fail_on(const std::string& s);

enum class Format { Text, Json, Sarif, Junit };
/// "text" | "json" | "sarif" | "junit"; throws Error otherwise.
Format parse_format(const std::string& s);

/// A finding that policy (a config file or a baseline) kept out of
/// Report::findings, and why.
struct Suppressed {
  Diagnostic finding;
  std::string by;      ///< "exclude-paths", "disable", "ignore" or "baseline"
  std::string reason;  ///< the ignore's reason, or what matched
  std::string where;   ///< the config entry ("FILE:LINE:COL") or the baseline file
};

/// What a --baseline run compared against (SARIF baselineState).
struct BaselineUse {
  std::string file;
  /// Baseline entries no finding matched any more (SARIF "absent").
  std::vector<Diagnostic> absent;
};

struct Report {
  /// "lint", "inspect", "host", "gds", "nccl-log", "nccl-tests": the JSON
  /// schema is "trainimg.<kind>/v1".
  std::string kind;
  std::vector<std::string> inputs;
  /// Every rule that was evaluated (JUnit makes one test case each; SARIF
  /// lists them as the tool's rules).
  std::vector<RuleInfo> rules;
  std::vector<Diagnostic> findings;
  /// Extra facts (inspect facts, host profile summary, parsed tables),
  /// emitted under "facts" in JSON and as a table in text.
  nlohmann::ordered_json facts;
  /// Facts shown in text output as "key: value" lines before the findings.
  std::vector<std::pair<std::string, std::string>> text_facts;
  /// Notes shown in text output after the facts (e.g. "ignored mlx5_0").
  std::vector<std::string> notes;
  /// Findings policy hid: counted nowhere; rendered only with
  /// `show_suppressed` (text, JSON, SARIF `suppressions`), except that SARIF
  /// lists those a baseline matched as baselineState "unchanged".
  std::vector<Suppressed> suppressed;
  bool show_suppressed = false;
  /// Set by --baseline: `findings` are then the new ones.
  std::optional<BaselineUse> baseline;
};

/// 0/1 by the highest finding severity and --fail-on.
int exit_code(const Report& r, FailOn fail_on);

struct TextOptions {
  bool color = false;
  /// Sources for caret display, by Diagnostic::file.
  const std::map<std::string, const SourceFile*>* sources = nullptr;
};
/// Compiler-like: "file:line:col: error: message [id]", source line, caret
/// with '~' under the range, "hint: …"; then a summary line.
std::string render_text(const Report& r, const TextOptions& opt = {});
/// One diagnostic, as render_text prints it (used for stopping errors too).
std::string render_diagnostic(const Diagnostic& d, bool color = false);
/// Versioned JSON ("schema": "trainimg.<kind>/v1"), stable ordering.
nlohmann::ordered_json render_json(const Report& r);
/// SARIF 2.1.0, one run, rules from Report::rules.
nlohmann::ordered_json render_sarif(const Report& r);
/// JUnit XML: one testsuite, one testcase per rule, failures for findings.
std::string render_junit(const Report& r);

/// Renders in the chosen format (JSON pretty-printed, trailing newline).
std::string render(const Report& r, Format f, const TextOptions& opt = {});

/// Whether to colour output on this fd: a TTY and NO_COLOR unset.
bool want_color(int fd);

}  // namespace trainimg
