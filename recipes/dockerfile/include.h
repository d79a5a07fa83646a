// SPDX-License-Identifier: GPL-3.0-or-later
// `INCLUDE+ FILE` of the edrevo/dockerfile-plus frontend (under a
// `# syntax=` directive): the named file's text takes the place of the line,
// as the frontend does before BuildKit parses the result. The whole is then
// parsed and linted as one Dockerfile, and every position mapped back to the
// file and line it came from.
#pragma once

#include <string>
#include <vector>

#include "common/diagnostic.h"
#include "common/source_file.h"

namespace trainimg::recipes {

struct LineOrigin {
  std::string file;
  int line = 0;
};

struct Inlined {
  SourceFile text{"", ""};         ///< named as the Dockerfile; INCLUDE+ lines replaced
  std::vector<LineOrigin> origin;  ///< per line of `text` (index line - 1)
  /// A remark (positioned in `text`) for each INCLUDE+ whose file could not
  /// be read: what it holds cannot be told.
  std::vector<Diagnostic> notes;
};

/// Reads every `INCLUDE+ FILE` of `f` in place (recursively, at most 16 deep,
/// never a file into itself). FILE is looked up as the frontend does,
/// relative to the build context: each of `roots` in turn (the Dockerfile's
/// directory, then `--context`). Without a `# syntax=` directive, or when
/// `f` cannot be read line by line, `text` is `f` unchanged (the parser then
/// refuses it as it would).
Inlined inline_includes(const SourceFile& f, const std::vector<std::string>& roots);

/// Moves a diagnostic of `in.text` (and its related locations) to the file
/// and line it came from; columns and the line's text are the same there.
void map_back(Diagnostic& d, const Inlined& in);

}  // namespace trainimg::recipes
