// SPDX-License-Identifier: GPL-3.0-or-later
// ARG/ENV substitution in Dockerfile syntax, and MappedText.
#include "recipes/dockerfile/expand.h"

#include <algorithm>
#include <cctype>
#include <optional>
#include <vector>

namespace trainimg::recipes {

Span MappedText::span(size_t pos, size_t len) const {
  if (origin.empty()) return {};
  pos = std::min(pos, origin.size() - 1);
  size_t end = std::min(pos + len, origin.size() - 1);
  size_t b = origin[pos];
  // The end of the range is one past the last byte it covers.
  size_t e = end > pos ? origin[end - 1] + 1 : b;
  return {b, e > b ? e - b : 0};
}

void MappedText::append(std::string_view s, size_t at) {
  if (!origin.empty()) origin.pop_back();
  for (size_t i = 0; i < s.size(); ++i) origin.push_back(at + i);
  text.append(s);
  origin.push_back(at + s.size());
}

namespace {

bool name_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool name_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }


}  // namespace

namespace {

// Expands every reference in `s` (escaped `$` kept with its escape when
// `raw_escapes`, as BuildKit's processStopOn does for patterns). Without
// `raw_escapes` (the word of `-`, `+`, `?`) quotes are removed as BuildKit
// and sh do: `${V:+"a b"}` is `a b`.
std::string expand_in(std::string_view s, const Vars& vars, char escape, bool sh, bool raw_escapes, bool& u) {
  std::string out;
  for (size_t i = 0; i < s.size();) {
    if (!raw_escapes && s[i] == '\'' && s.find('\'', i + 1) != std::string_view::npos) {
      size_t e = s.find('\'', i + 1);
      out.append(s.substr(i + 1, e - i - 1));
      i = e + 1;
    } else if (!raw_escapes && s[i] == '"') {
      for (++i; i < s.size() && s[i] != '"';) {
        if (s[i] == escape && i + 1 < s.size() &&
            (s[i + 1] == '"' || s[i + 1] == '$' || s[i + 1] == escape)) {
          out += s[i + 1];
          i += 2;
        } else if (s[i] == '$') {
          i = expand_reference(s, i, vars, escape, out, u, sh);
        } else {
          out += s[i++];
        }
      }
      ++i;
    } else if (s[i] == escape && i + 1 < s.size()) {
      if (raw_escapes) out += s[i];
      if (raw_escapes || s[i + 1] == '$')
        out += s[i + 1];
      else
        out.append(s.substr(i, 2));
      i += 2;
    } else if (s[i] == '$') {
      i = expand_reference(s, i, vars, escape, out, u, sh);
    } else {
      out += s[i++];
    }
  }
  return out;
}

// A glob pattern of BuildKit's convertShellPatternToRegex: `?` one
// character, `*` any run, `\*` `\?` `\\` literal, `\}` `\/` the character.
struct Glob {
  enum Kind { Lit, Any, Star };
  std::vector<std::pair<Kind, char>> toks;
};

// Parses `p`; nullopt where BuildKit would fail the build (`\x`) or where
// the Dockerfile and the shell read it differently (`[…]` is a bracket
// expression for sh, literal for BuildKit; quotes).
std::optional<Glob> parse_glob(std::string_view p, bool sh) {
  Glob g;
  if (p.size() > 4096) return std::nullopt;  // the matcher recurses once per token
  for (size_t i = 0; i < p.size(); ++i) {
    char c = p[i];
    if (c == '\\') {
      if (i + 1 >= p.size()) return std::nullopt;
      char n = p[i + 1];
      if (n == '}' || n == '/') continue;  // the next round takes it as a literal
      if (n != '*' && n != '?' && n != '\\') return std::nullopt;
      g.toks.emplace_back(Glob::Lit, n);
      ++i;
    } else if (c == '*') {
      g.toks.emplace_back(Glob::Star, c);
    } else if (c == '?') {
      g.toks.emplace_back(Glob::Any, c);
    } else if (c == '\'' || c == '"' || (sh && (c == '[' || c == ']'))) {
      return std::nullopt;
    } else {
      g.toks.emplace_back(Glob::Lit, c);
    }
  }
  return g;
}

// Go's regexp (leftmost-first, as a backtracking matcher would) for the
// glob at v[pos…]: the end of the first match in priority order, npos when
// none. `*` is `.*` (greedy) or `.*?`; `.` does not match a newline.
// `budget` bounds the work (npos and budget 0 when spent).
size_t glob_at(const Glob& g, size_t k, std::string_view v, size_t pos, bool greedy, long& budget) {
  if (--budget <= 0) return std::string_view::npos;
  if (k == g.toks.size()) return pos;
  auto [kind, c] = g.toks[k];
  if (kind != Glob::Star) {
    if (pos >= v.size() || v[pos] == '\n' || (kind == Glob::Lit && v[pos] != c))
      return std::string_view::npos;
    return glob_at(g, k + 1, v, pos + 1, greedy, budget);
  }
  size_t run = 0;
  while (pos + run < v.size() && v[pos + run] != '\n') ++run;
  for (size_t n = 0; n <= run; ++n) {
    size_t e = glob_at(g, k + 1, v, pos + (greedy ? run - n : n), greedy, budget);
    if (e != std::string_view::npos || budget <= 0) return e;
  }
  return std::string_view::npos;
}

// BuildKit's trimPrefix (`#`, `##`) and trimSuffix (`%`, `%%`: pattern and
// value reversed, then trimPrefix). nullopt when the budget ran out.
std::optional<std::string> trim(const Glob& g, std::string value, bool suffix, bool greedy) {
  Glob pat = g;
  if (suffix) {
    std::reverse(pat.toks.begin(), pat.toks.end());
    std::reverse(value.begin(), value.end());
  }
  long budget = 200000;
  size_t e = glob_at(pat, 0, value, 0, greedy, budget);
  if (budget <= 0) return std::nullopt;
  if (e != std::string_view::npos) value.erase(0, e);
  if (suffix) std::reverse(value.begin(), value.end());
  return value;
}

// Go's Regexp.ReplaceAllString / first-match replacement (unanchored,
// greedy stars, leftmost start first). nullopt when the budget ran out.
std::optional<std::string> replace(const Glob& g, std::string_view value, const std::string& repl, bool all) {
  long budget = 200000;
  auto find = [&](size_t from, size_t& a) -> size_t {
    for (a = from; a <= value.size(); ++a) {
      size_t e = glob_at(g, 0, value, a, true, budget);
      if (e != std::string_view::npos || budget <= 0) return e;
    }
    return std::string_view::npos;
  };
  std::string out;
  size_t a = 0;
  if (!all) {
    size_t e = find(0, a);
    if (budget <= 0) return std::nullopt;
    if (e == std::string_view::npos) return std::string(value);
    return std::string(value.substr(0, a)) + repl + std::string(value.substr(e));
  }
  size_t last = 0, search = 0;
  while (search <= value.size()) {
    size_t e = find(search, a);
    if (budget <= 0) return std::nullopt;
    if (e == std::string_view::npos) break;
    out.append(value.substr(last, a - last));
    if (e > last || a == 0) out += repl;
    last = e;
    search = search + 1 > e ? search + 1 : e;
  }
  out.append(value.substr(std::min(last, value.size())));
  return out;
}

bool plain_ascii(std::string_view s) {
  for (char c : s)
    if (static_cast<unsigned char>(c) >= 0x80) return false;
  return true;
}

// Index of the first `/` of `s` outside an escape and a nested `${…}`.
size_t pattern_end(std::string_view s, char escape) {
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == escape)
      ++i;
    else if (s[i] == '$' && i + 1 < s.size() && s[i + 1] == '{') {
      size_t c = closing_brace(s, i + 1, escape);
      if (c == std::string_view::npos) return c;
      i = c - 1;
    } else if (s[i] == '/') {
      return i;
    }
  }
  return std::string_view::npos;
}

}  // namespace

// Index one past the `}` that closes the `${` whose `{` is at `open`; npos
// when unclosed. As BuildKit's processStopOn('}') reads a word (and sh): an
// escaped character, a quoted string and a nested `${…}` are passed over
// whole, so `${V:-"}"}` closes at its last brace; a bare `{` is a plain
// character (the first unquoted `}` closes `${V:-{a}}`, as in BuildKit).
// `in_dq`: the reference sits in a double-quoted shell string, where a `'`
// of the word is a plain character (dash, bash --posix, busybox sh).
size_t closing_brace(std::string_view s, size_t open, char escape, bool in_dq) {
  std::vector<char> open_ctx{'{'};  // '{': in a ${…}; '"': in a double-quoted string (no recursion)
  for (size_t i = open + 1; i < s.size();) {
    char c = s[i];
    bool brace = s[i] == '$' && i + 1 < s.size() && s[i + 1] == '{';
    if (c == escape) {
      i += 2;
    } else if (brace) {
      open_ctx.push_back('{');
      i += 2;
    } else if (open_ctx.back() == '"') {
      if (c == '"') open_ctx.pop_back();
      ++i;
    } else if (c == '}') {
      open_ctx.pop_back();
      ++i;
      if (open_ctx.empty()) return i;
    } else if (c == '"') {
      open_ctx.push_back('"');
      ++i;
    } else if (c == '\'' && !in_dq) {
      size_t e = s.find('\'', i + 1);
      if (e == std::string_view::npos) return e;
      i = e + 1;
    } else {
      ++i;
    }
  }
  return std::string_view::npos;
}

size_t expand_reference(std::string_view s, size_t i, const Vars& vars, char escape, std::string& out,
                        bool& unresolved, bool sh, bool in_dq) {
  // s[i] == '$'
  if (i + 1 >= s.size()) {
    out += '$';
    return i + 1;
  }
  char c = s[i + 1];
  if (name_start(c)) {
    size_t e = i + 1;
    while (e < s.size() && name_char(s[e])) ++e;
    std::string name(s.substr(i + 1, e - i - 1));
    auto it = vars.find(name);
    if (it != vars.end() && it->second) out += *it->second;
    else {
      out.append(s.substr(i, e - i));
      unresolved = true;
    }
    return e;
  }
  if (c != '{') {
    out += '$';
    return i + 1;
  }
  size_t close = closing_brace(s, i + 1, escape, sh && in_dq);
  if (close == std::string_view::npos) {
    out.append(s.substr(i));
    unresolved = true;
    return s.size();
  }
  std::string_view inner = s.substr(i + 2, close - i - 3);
  size_t n = 0;
  while (n < inner.size() && name_char(inner[n])) ++n;
  std::string name(inner.substr(0, n));
  std::string_view rest = inner.substr(n);
  auto it = vars.find(name);
  bool known = it != vars.end() && it->second;
  bool declared = it != vars.end();  // ARG without value: unset at build time
  auto keep = [&] {
    out.append(s.substr(i, close - i));
    unresolved = true;
    return close;
  };
  if (name.empty()) return keep();
  if (rest.empty()) {
    if (!known) return keep();
    out += *it->second;
    return close;
  }
  bool colon = rest[0] == ':';
  if (colon && rest.size() < 2) return keep();  // "${VAR:}": no operator
  char op = rest[colon ? 1 : 0];
  std::string_view word = rest.substr(colon ? 2 : 1);
  if (op == '-' || op == '+') {
    if (!known && !declared) return keep();
    bool set = known && (!colon || !it->second->empty());
    bool u = false;
    std::string w = expand_in(word, vars, escape, sh, false, u);
    if (u) unresolved = true;
    if (op == '-')
      out += set ? *it->second : w;
    else
      out += set ? w : std::string();
    return close;
  }
  // The forms below take the variable's value: an ARG without default (which
  // --build-arg may set) is as unknown as a name never declared.
  if (!known) return keep();
  const std::string& value = *it->second;
  if (op == '?') {
    // ${VAR?msg} fails the build when VAR is unset, ${VAR:?msg} also when empty.
    if (colon && value.empty()) return keep();
    out += value;
    return close;
  }
  // ${VAR:#x}, ${VAR:%x}, ${VAR:/x/y}, ${VAR:=x}: BuildKit refuses them
  // ("unsupported modifier"); `=` and unknown operators are kept.
  if (colon || (op != '#' && op != '%' && op != '/')) return keep();
  // Patterns on values the two readers could match differently (bytes of a
  // multi-byte character; sh's `*` crosses newlines, Go's `.` does not).
  if (!plain_ascii(value) || (sh && value.find('\n') != std::string::npos)) return keep();
  bool u = false;
  if (op == '#' || op == '%') {
    std::string pat = expand_in(word, vars, escape, sh, true, u);
    if (u || !plain_ascii(pat)) return keep();
    bool greedy = !pat.empty() && pat[0] == op;
    if (greedy) pat.erase(0, 1);
    auto g = parse_glob(pat, sh);
    if (!g) return keep();
    auto r = trim(*g, value, op == '%', greedy);
    if (!r) return keep();
    out += *r;
    return close;
  }
  // ${VAR/pattern/repl}, ${VAR//pattern/repl}: BuildKit since dockerfile
  // 1.7.0; dash, Debian's and Ubuntu's /bin/sh, has no such expansion.
  if (sh) return keep();
  bool all = word.size() > 0 && word[0] == '/';
  if (all) word.remove_prefix(1);
  size_t slash = pattern_end(word, escape);
  if (slash == std::string_view::npos) return keep();
  std::string pat = expand_in(word.substr(0, slash), vars, escape, sh, true, u);
  std::string_view rword = word.substr(slash + 1);
  // Escapes stay in the replacement as written (`\/` gives `\/`), quotes
  // would be removed; ReplaceAllString reads `$1`: keep those rather than
  // guess.
  if (rword.find_first_of("'\"") != std::string_view::npos) return keep();
  std::string repl = expand_in(rword, vars, escape, sh, true, u);
  if (u || !plain_ascii(pat) || (all && repl.find('$') != std::string::npos)) return keep();
  auto g = parse_glob(pat, sh);
  if (!g) return keep();
  auto r = replace(*g, value, repl, all);
  if (!r) return keep();
  out += *r;
  return close;
}

std::string expand_vars(std::string_view s, const Vars& vars, char escape, bool* unresolved) {
  std::string out;
  bool u = false;
  for (size_t i = 0; i < s.size();) {
    if (s[i] == escape && i + 1 < s.size() && s[i + 1] == '$') {
      out += '$';
      i += 2;
    } else if (s[i] == '$') {
      i = expand_reference(s, i, vars, escape, out, u);
    } else {
      out += s[i++];
    }
  }
  if (unresolved && u) *unresolved = true;
  return out;
}

std::vector<std::string> referenced_vars(std::string_view s) {
  std::vector<std::string> names;
  for (size_t i = 0; i + 1 < s.size(); ++i) {
    if (s[i] != '$') continue;
    size_t b = i + 1;
    if (s[b] == '{') ++b;
    size_t e = b;
    while (e < s.size() && name_char(s[e])) ++e;
    if (e > b && name_start(s[b])) names.emplace_back(s.substr(b, e - b));
  }
  return names;
}

}  // namespace trainimg::recipes
