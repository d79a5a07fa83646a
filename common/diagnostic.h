// SPDX-License-Identifier: GPL-3.0-or-later
// The one error/finding shape of trainimg: plain data, rendered elsewhere
// (report.h). Recipe validation, lint, inspect and host checks all produce it.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace trainimg {

enum class Severity { Info = 0, Warning = 1, Error = 2 };

std::string_view to_string(Severity s);
/// Parses "info", "warning", "error"; nullopt otherwise.
std::optional<Severity> parse_severity(std::string_view s);

/// A rule's fixed description: what `trainimg rules` lists, what SARIF and
/// JUnit name. Ids are kebab-case and stable (domain.md §6).
struct RuleInfo {
  std::string id;
  Severity severity = Severity::Error;  ///< default severity
  std::string summary;                  ///< fires when …
  std::string fix;                      ///< how to fix it
  std::string seed;                     ///< seed document section it comes from
  std::string domain;                   ///< "dockerfile", "recipe", "image", "host"
};

/// Another place that belongs to the same finding (the other lines of one
/// root cause): SARIF relatedLocations, JSON "related".
struct RelatedLocation {
  std::string file;
  int line = 0;
  int column = 0;
  int length = 0;
  std::string message;
};

/// One message about one place. Lines and columns are 1-based; 0 = unknown.
/// `length` is the number of columns the caret range covers (>= 1 when known).
struct Diagnostic {
  Severity severity = Severity::Error;
  std::string rule_id;  ///< empty for plain failures (bad input, I/O)
  std::string message;
  std::string hint;
  std::string file;  ///< file, image reference, or host profile
  int line = 0;
  int column = 0;
  int length = 0;
  std::string source_line;               ///< text of `line`, for the caret display
  std::string path;                      ///< path inside an image, when the finding is about one
  std::string layer;                     ///< image layer digest (or "squashfs") of `path`
  std::string seed;                      ///< seed section (copied from the rule)
  std::vector<RelatedLocation> related;  ///< other places of the same root cause

  /// "file:line:col" with the parts that are known.
  std::string location() const;
};

/// Orders findings for stable output: file, line, column, rule id, message.
void sort_diagnostics(std::vector<Diagnostic>& d);

/// Drops findings whose severity was silenced; returns the highest severity
/// left, or nullopt when the list is empty.
std::optional<Severity> max_severity(const std::vector<Diagnostic>& d);

}  // namespace trainimg
