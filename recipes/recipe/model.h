// SPDX-License-Identifier: GPL-3.0-or-later
// The recipe model: what a recipe YAML says, each value with the place it
// came from, so every refusal and every mapped lint finding can point at the
// recipe node that caused it (issue 3: "recipe.yaml:LINE:COL").
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace trainimg::recipes {

/// A place in the recipe, 1-based. `file` is the recipe path, or
/// "--set KEY" for values that came from a command-line override (line 0).
struct Where {
  std::string file;
  int line = 0;
  int column = 0;
};

/// A scalar value and where it was written. `lines` holds the position of
/// the first character of each line of a multi-line value (a literal block
/// `run: |`), when it could be located in the source; else it is empty.
struct Text {
  std::string value;
  Where where;
  int length = 0;  ///< columns the value covers on its first line (caret range)
  std::vector<Where> lines;

  /// Where the value's first character is (inside quotes), or `where`.
  const Where& start() const { return lines.empty() ? where : lines.front(); }
  /// Whether the first line's position is exact (verbatim mapping is safe).
  bool exact() const { return !lines.empty(); }
};

/// A NAME: value pair of `args`, `labels` or a step's `env`.
struct NamedValue {
  Text key;
  Text value;
  bool has_value = true;  ///< false for `NAME:` with nothing after it
};

struct CopySpec {
  Text src;
  Text dst;
  Where where;
};

/// How a step's `run` text becomes a RUN instruction.
enum class Shell {
  Join,  ///< each line a command, joined with `&&` (the default)
  Raw,   ///< the text as written, lines continued with `\` (no `&&` added)
};

struct Step {
  Text name;
  std::optional<Text> description;
  std::vector<NamedValue> env;
  std::optional<Text> run;
  Shell shell = Shell::Join;
  std::vector<CopySpec> copy;
  Where where;
};

/// ENTRYPOINT or CMD: exec form (a YAML list) or shell form (a string).
struct ImageCommand {
  bool exec_form = true;
  std::vector<Text> words;
  Where where;
};

/// The default download location of the EFA installer tarball.
inline constexpr const char* kDefaultEfaMirror = "https://efa-installer.amazonaws.com";

struct Recipe {
  std::string file;                    ///< the recipe path as given (names it in the header)
  std::vector<std::string> overrides;  ///< the --set arguments applied, in order
  Text base;
  std::optional<Text> platform;
  Text efa_installer;
  std::vector<Text> efa_flags;
  Text efa_mirror;  ///< kDefaultEfaMirror when not given
  Where efa_where;
  std::vector<Text> apt;
  Where apt_where;
  std::vector<NamedValue> args;
  std::vector<NamedValue> labels;
  std::optional<Text> workdir;
  std::optional<ImageCommand> entrypoint;
  std::optional<ImageCommand> cmd;
  std::vector<Step> steps;
};

}  // namespace trainimg::recipes
