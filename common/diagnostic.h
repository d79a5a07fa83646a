// SPDX-License-Identifier: GPL-3.0-or-later
// The one error/finding shape of trainimg: plain data, rendered elsewhere
// (report.h). Recipe validation, lint, inspect and host checks all produce it.
#pragma once

#include <algorithm>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/source_file.h"

namespace trainimg {

enum class Severity { Info = 0, Warning = 1, Error = 2 };

std::string_view to_string(Severity s);
/// Parses "info", "warning", "error"; nullopt otherwise.
std::optional<Severity> parse_severity(std::string_view s);

/// A rule's fixed description, one per rule of every kind: what `trainimg
/// rules` lists (and renders as the README/docs tables), what SARIF and JUnit
/// name. Ids are kebab-case and stable (domain.md §6); an id judged by two
/// kinds (nccl-net-plugin: Dockerfile and image) has one descriptor per kind.
struct RuleInfo {
  std::string id;
  Severity severity = Severity::Error;  ///< default severity
  std::string summary;                  ///< fires when …
  std::string fix;                      ///< how to fix it
  std::string seed;                     ///< seed document section it comes from
  std::string kind;                     ///< "dockerfile", "recipe", "image", "host", "fleet"
  std::string docs = {};                ///< page and anchor that documents it ("docs/lint.md#rules")
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

/// The one way a rule builds a finding: the rule's id, its default
/// severity, its fix as the hint and its seed section, then where the
/// finding is. Converts to the Diagnostic it built.
///   out.push_back(Finding(rule, "message").at(src, offset, length));
class Finding {
 public:
  Finding(const RuleInfo& rule, std::string message);

  /// A severity other than the rule's default (a warning-level variant).
  Finding& severity(Severity s);
  /// A hint that replaces the rule's fix (one naming this finding's values).
  Finding& hint(std::string h);
  /// The file, image reference, node or profile the finding is about.
  Finding& in(std::string file);
  /// A 1-based position in that file; `source_line` for the caret display.
  Finding& at(int line, int column = 0, int length = 0, std::string source_line = {});
  /// The position of bytes [offset, offset + length) of `src` (file, line,
  /// column, caret range cut at the line's end, the line's text).
  Finding& at(const SourceFile& src, size_t offset, size_t length);
  /// The same for a span of `src` (anything with `offset` and `length`).
  template <class Span>
  Finding& at(const SourceFile& src, const Span& s) {
    return at(src, s.offset, s.length);
  }
  /// At a node of a text file (anything with `file`, `line`, `column`, as a
  /// recipe's YAML node), `length` columns wide (at least one when the line
  /// is known, none when it is not).
  template <class Where>
  Finding& at_node(const Where& w, int length) {
    in(w.file);
    return at(w.line, w.column, w.line > 0 ? std::max(1, length) : 0);
  }
  /// A path inside an image, and the layer it comes from.
  Finding& path(std::string p, std::string layer = {});
  /// Another place of the same root cause.
  Finding& related(RelatedLocation r);
  /// Another place of the same root cause at bytes of `src`.
  Finding& related(const SourceFile& src, size_t offset, size_t length, std::string message);
  template <class Span>
  Finding& related(const SourceFile& src, const Span& s, std::string message) {
    return related(src, s.offset, s.length, std::move(message));
  }

  operator Diagnostic() const& { return d_; }
  operator Diagnostic() && { return std::move(d_); }

 private:
  Diagnostic d_;
};

/// Orders findings for stable output: file, line, column, rule id, message.
void sort_diagnostics(std::vector<Diagnostic>& d);

/// Drops findings whose severity was silenced; returns the highest severity
/// left, or nullopt when the list is empty.
std::optional<Severity> max_severity(const std::vector<Diagnostic>& d);

}  // namespace trainimg
