// SPDX-License-Identifier: GPL-3.0-or-later
// The Dockerfile model: parsed once (positions, stages, resolved ARG/ENV,
// every RUN already split into shell commands) so that lint rules never look
// at raw text. Implementation: recipes/dockerfile/ (parser.cc, shell.cc,
// expand.cc, include.cc).
#pragma once

#include <cstddef>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/diagnostic.h"
#include "common/source_file.h"

namespace trainimg::recipes {

/// A byte range of the ORIGINAL file (continuations and comments included).
struct Span {
  size_t offset = 0;
  size_t length = 0;
};

/// Text cut out of the original file with the original offset of each byte:
/// what the parser hands to the shell splitter once continuations are joined.
/// `origin.size() == text.size() + 1` (the last entry is the end offset).
struct MappedText {
  std::string text;
  std::vector<size_t> origin;

  /// Span of text[pos, pos+len) in the original file.
  Span span(size_t pos, size_t len) const;
  /// Appends `s`, whose first byte sits at original offset `at` and whose
  /// bytes are contiguous in the original file.
  void append(std::string_view s, size_t at);
};

/// Variables in effect at an instruction (ARG and ENV). A value of nullopt
/// means "declared, value unknown at parse time" (an ARG without default,
/// which --build-arg may set). Names not in the map are unknown as well
/// (for example what the base image's ENV holds).
using Vars = std::map<std::string, std::optional<std::string>>;

/// Expands $VAR, ${VAR}, ${VAR:-word}, ${VAR-word}, ${VAR:+word}, ${VAR+word},
/// ${VAR?msg}, ${VAR:?msg}, ${VAR#glob}, ${VAR##glob}, ${VAR%glob}, ${VAR%%glob},
/// ${VAR/glob/repl}, ${VAR//glob/repl} (BuildKit's semantics)
/// in Dockerfile (not shell) syntax. References whose value is unknown are
/// kept as written, so rules can still see them. `escape` escapes `$`.
/// `unresolved` (if given) is set when any reference stayed unknown.
std::string expand_vars(std::string_view s, const Vars& vars, char escape = '\\', bool* unresolved = nullptr);

/// One shell word.
struct Word {
  std::string text;         ///< quotes and escapes removed, known variables expanded
  std::string raw;          ///< as written (continuations joined)
  Span span;                ///< in the original file
  bool quoted = false;      ///< some part of it was quoted
  bool unresolved = false;  ///< it references a variable whose value is unknown
};

/// How a command is joined to the command before it at the same nesting.
enum class ShellOp { First, And, Or, Seq, Pipe, Background };
std::string_view to_string(ShellOp op);

/// One simple command of a script: `A=1 B=2 cmd arg...`.
struct Command {
  std::vector<Word> assignments;  ///< VAR=value prefixes (or a bare assignment)
  std::vector<Word> argv;         ///< argv[0] is the program; may be empty
  std::vector<Word> redirects;    ///< targets of output redirections (`> f`, `>> f`, `&> f`)
  ShellOp op = ShellOp::First;    ///< operator joining it to the previous command
  /// 0 for the RUN script itself; +1 for each `sh -c` / `bash -c` string, each
  /// `( … )` subshell and each heredoc fed to a shell that it is parsed from.
  int depth = 0;
  /// Index (in Script::commands) of the `sh -c …` command this one was parsed
  /// out of, or -1.
  int parent = -1;
  Span span;  ///< from the first word to the last

  /// Base name of argv[0] ("" when there is none): "/usr/bin/apt-get" -> "apt-get".
  std::string program() const;
};

/// The commands of a script in execution order (nested `sh -c` strings follow
/// the command that runs them).
struct Script {
  std::vector<Command> commands;
};

/// Splits a shell script into commands. Understands quotes, backslash escapes,
/// $VAR/${…}/$(…)/`…` (kept inside the word), `&&` `||` `;` `|` `&` newlines,
/// comments, `( … )` and `{ …; }` groups, `if/then/fi`-style keywords (skipped),
/// `VAR=x cmd` prefixes, heredoc redirections (`cat <<EOF` bodies skipped), and
/// recurses into `sh -c '…'` / `bash -c "…"` with offsets mapped back.
/// Throws trainimg::Error (positioned in `file`) for an unterminated quote.
Script split_shell(const MappedText& script, const Vars& vars, const SourceFile& file);

/// `--name=value` flags of an instruction (COPY --from=, RUN --mount=, …).
struct Flag {
  std::string name;   ///< without dashes: "from"
  std::string value;  ///< variables expanded
  Span span;
};

/// `KEY=VALUE` of ENV/ARG/LABEL (also the legacy `ENV KEY VALUE` form).
struct KeyValue {
  std::string key;
  std::string value;       ///< quotes removed, known variables expanded
  std::string raw_value;   ///< quotes removed, variables NOT expanded
  bool has_value = false;  ///< false for `ARG NAME`
  bool unresolved = false;
  Span key_span;
  Span value_span;  ///< empty range at the end of the key when there is no value
};

/// A here-document of RUN/COPY/ADD (`<<EOF`, `<<-EOF`, `<<"EOF"`).
struct Heredoc {
  std::string delimiter;
  std::string body;  ///< the lines between the introducer and the delimiter
  Span body_span;
  bool expand = true;       ///< false when the delimiter was quoted
  bool strip_tabs = false;  ///< `<<-`
};

struct Instruction {
  std::string keyword;   ///< upper-case: FROM, RUN, ENV, …
  std::string raw_args;  ///< after the keyword: continuations joined, comment lines dropped
  int line = 0;          ///< of the keyword (1-based)
  int column = 0;
  int end_line = 0;  ///< last line, heredoc bodies included
  Span span;         ///< the keyword
  std::vector<Flag> flags;
  bool json_form = false;  ///< exec form `["a", "b"]`
  /// JSON elements, or the shell-form words after the flags (for every
  /// instruction but RUN's shell form, whose commands are in `script`).
  std::vector<Word> args;
  std::vector<KeyValue> pairs;  ///< ENV, ARG, LABEL
  std::vector<Heredoc> heredocs;
  Script script;  ///< RUN: the commands it runs
  /// ARG and ENV in effect before this instruction (shared between the
  /// instructions of a run with no ARG/ENV in between).
  std::shared_ptr<const Vars> vars;
  std::vector<std::string> ignore;  ///< ids from `# trainimg: ignore=ID[,ID]` on the line before
  MappedText text;                  ///< args text with original offsets

  /// The flag `name` (without dashes), or nullptr.
  const Flag* flag(std::string_view name) const;
};

struct Stage {
  int index = 0;
  std::string name;     ///< `AS name`, lower-case; empty when unnamed
  std::string base;     ///< the FROM image or stage name, variables expanded
  int base_stage = -1;  ///< index of the stage FROM names, or -1 for an image
  /// The final stage and every stage it inherits FROM (transitively): what
  /// ends up in the image. Stages only used by COPY --from= do not.
  bool in_final_image = false;
  /// Opened by an instruction before any FROM after a custom frontend's
  /// instruction (`INCLUDE+ FILE` that could not be read): no FROM, `base`
  /// empty, what the base holds cannot be told.
  bool base_unknown = false;
  std::vector<Instruction> instructions;  ///< FROM first (none when base_unknown)
};

struct Dockerfile {
  std::string file;
  char escape = '\\';
  std::map<std::string, std::string> directives;  ///< lower-case name -> value
  std::vector<Instruction> global_args;           ///< ARGs before the first FROM
  std::vector<Stage> stages;                      ///< never empty
  /// What the parser skipped instead of refusing (info severity, positioned):
  /// an unknown instruction under a `# syntax=` directive.
  std::vector<Diagnostic> notes;

  const Stage& final_stage() const { return stages.back(); }
  /// The image at the root of a stage's FROM chain ("scratch" included).
  const std::string& root_image(const Stage& s) const;
};

/// Parses a Dockerfile. Throws trainimg::Error positioned at `file:line:col`
/// for malformed input: empty file, no FROM, unknown instruction (without a
/// `# syntax=` directive; with one it is skipped and noted), an
/// instruction before FROM other than ARG, unterminated heredoc or quote,
/// bad JSON form, a FROM with no image.
Dockerfile parse_dockerfile(const SourceFile& f);

/// Whether an image reference is an NVIDIA NGC image (nvcr.io/nvidia/...).
bool is_ngc_image(std::string_view image);

/// Names of the variables `s` references ($A, ${B}, ${C:-x}), in order.
std::vector<std::string> referenced_vars(std::string_view s);
/// Index one past the `}` closing the `${` whose `{` is at `open` (npos when
/// unclosed), as BuildKit reads the word: escapes, quoted strings and nested
/// `${…}` passed over whole. `in_dq`: in a double-quoted sh string, where a
/// `'` is a plain character.
size_t closing_brace(std::string_view s, size_t open, char escape, bool in_dq = false);

/// `INCLUDE+ FILE` of the edrevo/dockerfile-plus frontend (under a `# syntax=`
/// directive): the named file's text takes the place of the line, as the
/// frontend does before BuildKit parses the result (include.cc).
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
