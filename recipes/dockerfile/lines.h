// SPDX-License-Identifier: GPL-3.0-or-later
// First pass of the Dockerfile parser: parser directives, then logical
// instructions (continuations joined, comment lines inside them dropped,
// here-document bodies read), each with its original offsets.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "recipes/dockerfile/dockerfile.h"

namespace trainimg::recipes {

struct RawInstruction {
  std::string keyword;  ///< upper-case
  size_t keyword_offset = 0;
  int line = 0;
  int end_line = 0;
  MappedText args;  ///< after the keyword, continuations joined
  std::vector<Heredoc> heredocs;
  /// For RUN with here-documents: the original text from the line after the
  /// instruction through the last delimiter line (the shell reads it).
  MappedText heredoc_text;
  std::vector<std::string> ignore;
};

struct RawDockerfile {
  char escape = '\\';
  std::map<std::string, std::string> directives;
  std::vector<RawInstruction> instructions;
  /// Unknown instructions skipped under a `# syntax=` directive (a custom
  /// frontend may define them), as info diagnostics at the keyword.
  std::vector<Diagnostic> notes;
  /// Those instructions themselves, in file order.
  struct Skipped {
    std::string word;  ///< as written: "INCLUDE+"
    size_t offset = 0;
    int line = 0;
    int end_line = 0;  ///< continuation lines included
    MappedText args;   ///< after the word, continuations joined
  };
  std::vector<Skipped> skipped;
  /// Index in `instructions` of the first instruction after each skipped one.
  std::vector<size_t> skipped_before;
};

/// An info diagnostic (a remark) at bytes [at, at + len) of `f`.
Diagnostic info_at(const SourceFile& f, size_t at, size_t len, std::string message);

/// Throws (positioned) on an unknown instruction (unless a `# syntax=`
/// directive names a frontend: then it is skipped with a note), a bad escape
/// directive or an unterminated here-document.
/// `frontend`: a file read in place into one whose `# syntax=` directive
/// names that frontend (an `INCLUDE+` file) is read as under it.
RawDockerfile read_lines(const SourceFile& f, const std::string& frontend = {});

}  // namespace trainimg::recipes
