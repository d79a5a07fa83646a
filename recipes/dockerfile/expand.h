// SPDX-License-Identifier: GPL-3.0-or-later
// Internal helpers of the Dockerfile model shared by the parser and the
// shell splitter.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "recipes/dockerfile/dockerfile.h"

namespace trainimg::recipes {

/// Expands the reference starting at s[i] == '$' into `out`; returns the
/// index after it. Unknown references are copied as written and set
/// `unresolved`. `sh`: the reference is read by /bin/sh in a RUN script, not
/// by BuildKit (`${VAR/x/y}` stays unresolved: dash has no such form);
/// `in_dq`: in a double-quoted sh string (a `'` in `${V:-it's}` is literal).
size_t expand_reference(std::string_view s, size_t i, const Vars& vars, char escape, std::string& out,
                        bool& unresolved, bool sh = false, bool in_dq = false);

}  // namespace trainimg::recipes

namespace trainimg::recipes {

/// Throws trainimg::Error at the original offset `at` of `f`.
[[noreturn]] void fail_at(const SourceFile& f, size_t at, size_t len, const std::string& message,
                          const std::string& hint = {});

/// text[b, e) with its origins.
MappedText slice(const MappedText& t, size_t b, size_t e);

/// A Dockerfile-syntax word: [b, e) of the instruction text.
struct WordRange {
  size_t b;
  size_t e;
};
/// Splits t.text[from, …) on blanks, keeping quoted strings whole. Throws
/// (positioned) on an unterminated quote, unless `lenient`: then the quote
/// runs to the end (words BuildKit never expands: CMD, ENTRYPOINT, …).
std::vector<WordRange> split_words(const MappedText& t, size_t from, char escape, const SourceFile& f,
                                   bool lenient = false);
/// Removes quotes and escapes; expands variables when `vars` is given,
/// otherwise keeps references as written.
std::string unquote(std::string_view raw, const Vars* vars, char escape, bool* unresolved = nullptr);
/// The Word for t.text[b, e).
Word make_word(const MappedText& t, WordRange r, const Vars& vars, char escape);

/// Exec form: `["a", "b"]` at t.text[from, …). Each element's decoded text
/// with origins. Throws (positioned) when it is not a JSON array of strings.
std::vector<std::pair<Word, MappedText>> parse_json_array(const MappedText& t, size_t from,
                                                          const SourceFile& f);
/// Whether t.text[from, …) is exec form: a JSON array (as BuildKit, anything
/// that is not JSON is shell form). Throws (positioned) when the array holds
/// something other than strings.
bool looks_like_json(const MappedText& t, size_t from, const SourceFile& f);

}  // namespace trainimg::recipes
