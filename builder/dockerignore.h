// SPDX-License-Identifier: GPL-3.0-or-later
// .dockerignore with the semantics of the docker CLI (moby/patternmatcher and
// its ignorefile reader): Go filepath.Match patterns (`*` and `?` never match
// `/`, `[a-z]`, `[^a-z]`, `\` escapes), `**` for any number of directories,
// `!` exceptions, a leading `/` trimmed, each pattern cleaned like Go's
// filepath.Clean, the LAST matching pattern wins, and a pattern that matches
// a parent directory matches everything under it.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace trainimg::builder {

class IgnorePattern {
 public:
  /// `cleaned` is the pattern after ignorefile cleaning, without its `!`.
  /// Throws Error (file:line) for a pattern filepath.Match rejects.
  IgnorePattern(std::string cleaned, bool exception, const std::string& file, int line);

  /// Whether a slash-separated context-relative path matches this pattern
  /// alone (no parent-directory rule).
  bool match(std::string_view path) const;
  const std::string& text() const { return text_; }
  bool exception() const { return exception_; }
  int line() const { return line_; }

 private:
  enum class Kind { Exact, Prefix, Suffix, Glob };
  struct Token {
    enum Type { Literal, Star, Any, Class, DoubleStar, DoubleStarEnd } type = Literal;
    char ch = 0;                                 ///< Literal
    std::vector<std::pair<char, char>> ranges;  ///< Class
    bool negated = false;                       ///< Class `[^…]`
  };
  bool match_tokens(size_t ti, std::string_view s) const;

  std::string text_;
  bool exception_ = false;
  int line_ = 0;
  Kind kind_ = Kind::Exact;
  std::vector<Token> tokens_;
};

class DockerIgnore {
 public:
  DockerIgnore() = default;
  /// Parses .dockerignore text: one pattern a line, `#` comment lines, blank
  /// lines skipped, surrounding white space trimmed, a UTF-8 BOM dropped.
  /// Throws Error positioned at `file:line` for a bad pattern or a lone `!`.
  static DockerIgnore parse(const std::string& file, std::string_view text);

  /// Adds `!path` at the end, so `path` is always sent (the CLI does this for
  /// the Dockerfile and .dockerignore).
  void keep(const std::string& path);

  /// Whether `path` (context-relative, slash-separated, no leading "./") is
  /// excluded: patterns in order, a match on the path or any of its parent
  /// directories counts, the last matching pattern decides.
  bool excluded(std::string_view path) const;

  /// For an excluded directory: whether the walk must still descend into it
  /// because an exception pattern names something below it (a literal prefix
  /// test, as the CLI does; `!**/x` alone does not reopen a directory).
  bool must_descend(std::string_view dir) const;

  const std::vector<IgnorePattern>& patterns() const { return patterns_; }

 private:
  std::vector<IgnorePattern> patterns_;
  bool has_exceptions_ = false;
};

/// Go's path.Clean for slash-separated paths ("" -> ".").
std::string clean_path(std::string_view p);

}  // namespace trainimg::builder
