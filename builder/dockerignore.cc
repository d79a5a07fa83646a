// SPDX-License-Identifier: GPL-3.0-or-later
#include "builder/dockerignore.h"

#include <cctype>

#include "common/error.h"

namespace trainimg::builder {
namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

// Length of the UTF-8 sequence starting with `c` (1 for ASCII or a stray byte).
size_t utf8_len(unsigned char c) {
  if (c >= 0xf0) return 4;
  if (c >= 0xe0) return 3;
  if (c >= 0xc0) return 2;
  return 1;
}

[[noreturn]] void bad_pattern(const std::string& file, int line, const std::string& text, const std::string& why) {
  Diagnostic d;
  d.file = file;
  d.line = line;
  d.column = 1;
  d.message = "bad .dockerignore pattern '" + text + "': " + why;
  d.hint = "patterns follow Go's filepath.Match: close every '[', escape a literal '[' or '\\' with '\\'";
  throw Error(std::move(d));
}

}  // namespace

std::string clean_path(std::string_view p) {
  if (p.empty()) return ".";
  bool rooted = p.front() == '/';
  std::vector<std::string_view> parts;
  size_t i = 0;
  while (i <= p.size()) {
    size_t j = p.find('/', i);
    if (j == std::string_view::npos) j = p.size();
    std::string_view el = p.substr(i, j - i);
    if (el.empty() || el == ".") {
      // dropped
    } else if (el == "..") {
      if (!parts.empty() && parts.back() != "..") {
        parts.pop_back();
      } else if (!rooted) {
        parts.push_back(el);
      }
    } else {
      parts.push_back(el);
    }
    i = j + 1;
  }
  std::string out = rooted ? "/" : "";
  for (size_t k = 0; k < parts.size(); ++k) {
    if (k) out += '/';
    out += parts[k];
  }
  return out.empty() ? "." : out;
}

// Mirrors the pattern compiler of moby/patternmatcher: literal patterns are
// compared directly, `X**` is a prefix test, `**X` (X literal) a suffix test,
// anything else a glob whose `*`/`?` stop at `/` and whose `**` spans
// directories.
IgnorePattern::IgnorePattern(std::string cleaned, bool exception, const std::string& file, int line)
    : text_(std::move(cleaned)), exception_(exception), line_(line) {
  enum { Exact, Prefix, Suffix, Glob } detected = Exact;
  const std::string& p = text_;
  size_t i = 0;
  for (int n = 0; i < p.size(); ++n) {
    char c = p[i++];
    Token t;
    t.type = Token::Literal;
    if (c == '*' && i < p.size() && p[i] == '*') {
      ++i;
      if (i < p.size() && p[i] == '/') ++i;  // `**/` is `**`
      if (i == p.size()) {
        if (detected == Exact) {
          detected = Prefix;
        } else {
          t.type = Token::DoubleStarEnd;
          detected = Glob;
        }
      } else {
        t.type = Token::DoubleStar;
        detected = Glob;
      }
      if (n == 0) detected = Suffix;
      if (detected == Prefix && n != 0) continue;  // no token: prefix test
      if (n == 0 && i == p.size()) t.type = Token::DoubleStarEnd;
      tokens_.push_back(t);
      continue;
    }
    if (c == '*') {
      t.type = Token::Star;
      detected = Glob;
    } else if (c == '?') {
      t.type = Token::Any;
      detected = Glob;
    } else if (c == '\\') {
      if (i == p.size()) bad_pattern(file, line, text_, "syntax error in pattern (trailing '\\')");
      t.ch = p[i++];
      detected = Glob;
    } else if (c == '[') {
      t.type = Token::Class;
      detected = Glob;
      if (i < p.size() && p[i] == '^') {
        t.negated = true;
        ++i;
      }
      // Elements as filepath.Match reads them: `lo` or `lo-hi`, `\` escapes,
      // `-` or `]` may not start one, at least one before the closing `]`.
      auto esc = [&]() -> char {
        if (i >= p.size()) bad_pattern(file, line, text_, "syntax error in pattern (unterminated '[')");
        if (p[i] == '-' || p[i] == ']')
          bad_pattern(file, line, text_, "syntax error in pattern (bad character class)");
        if (p[i] == '\\') {
          ++i;
          if (i >= p.size()) bad_pattern(file, line, text_, "syntax error in pattern (trailing '\\')");
        }
        return p[i++];
      };
      do {
        char lo = esc(), hi = lo;
        if (i < p.size() && p[i] == '-') {
          ++i;
          hi = esc();
        }
        t.ranges.emplace_back(lo, hi);
      } while (i < p.size() && p[i] != ']');
      if (i >= p.size()) bad_pattern(file, line, text_, "syntax error in pattern (unterminated '[')");
      ++i;  // ']'
    } else {
      t.ch = c;
    }
    tokens_.push_back(t);
  }
  kind_ = detected == Exact    ? Kind::Exact
          : detected == Prefix ? Kind::Prefix
          : detected == Suffix ? Kind::Suffix
                               : Kind::Glob;
}

bool IgnorePattern::match_tokens(size_t ti, std::string_view s) const {
  for (; ti < tokens_.size(); ++ti) {
    const Token& t = tokens_[ti];
    switch (t.type) {
      case Token::Literal:
        if (s.empty() || s.front() != t.ch) return false;
        s.remove_prefix(1);
        break;
      case Token::Any: {
        if (s.empty() || s.front() == '/') return false;
        size_t n = std::min(utf8_len(static_cast<unsigned char>(s.front())), s.size());
        s.remove_prefix(n);
        break;
      }
      case Token::Class: {  // unlike `*` and `?`, a class may match '/' (as in Go)
        if (s.empty()) return false;
        bool in = false;
        for (auto [lo, hi] : t.ranges) in = in || (s.front() >= lo && s.front() <= hi);
        if (in == t.negated) return false;
        s.remove_prefix(1);
        break;
      }
      case Token::Star:  // [^/]*: try every length up to the next '/'
        for (size_t k = 0;; ++k) {
          if (match_tokens(ti + 1, s.substr(k))) return true;
          if (k == s.size() || s[k] == '/') return false;
        }
      case Token::DoubleStar:  // (.*/)?: nothing, or up to and including any '/'
        if (match_tokens(ti + 1, s)) return true;
        for (size_t k = 0; k < s.size(); ++k)
          if (s[k] == '/' && match_tokens(ti + 1, s.substr(k + 1))) return true;
        return false;
      case Token::DoubleStarEnd:
        return true;
    }
  }
  return s.empty();
}

bool IgnorePattern::match(std::string_view path) const {
  switch (kind_) {
    case Kind::Exact:
      return path == text_;
    case Kind::Prefix:
      return path.starts_with(std::string_view(text_).substr(0, text_.size() - 2));
    case Kind::Suffix: {
      std::string_view suffix = std::string_view(text_).substr(2);
      if (path.ends_with(suffix)) return true;
      return !suffix.empty() && suffix.front() == '/' && path == suffix.substr(1);
    }
    case Kind::Glob:
      return match_tokens(0, path);
  }
  return false;
}

DockerIgnore DockerIgnore::parse(const std::string& file, std::string_view text) {
  DockerIgnore d;
  if (text.starts_with("\xEF\xBB\xBF")) text.remove_prefix(3);
  int line = 0;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    if (nl == std::string_view::npos) nl = text.size();
    std::string_view raw = trim(text.substr(pos, nl - pos));
    pos = nl + 1;
    ++line;
    if (raw.empty() || raw.front() == '#') continue;
    bool exception = raw.front() == '!';
    if (exception) raw = trim(raw.substr(1));
    if (raw.empty()) bad_pattern(file, line, "!", "illegal exclusion pattern: \"!\"");
    std::string p = clean_path(raw);
    if (p.size() > 1 && p.front() == '/') p.erase(0, 1);
    d.patterns_.emplace_back(std::move(p), exception, file, line);
    d.has_exceptions_ = d.has_exceptions_ || exception;
  }
  return d;
}

void DockerIgnore::keep(const std::string& path) {
  if (!excluded(path)) return;
  patterns_.emplace_back(path, true, "", 0);
  has_exceptions_ = true;
}

bool DockerIgnore::excluded(std::string_view path) const {
  bool matched = false;
  size_t slash = path.rfind('/');
  for (const auto& p : patterns_) {
    if (p.exception() != matched) continue;  // cannot change the outcome
    bool m = p.match(path);
    // A pattern matching a parent directory matches everything under it.
    for (size_t k = path.find('/'); !m && slash != std::string_view::npos && k <= slash; k = path.find('/', k + 1)) {
      m = p.match(path.substr(0, k));
      if (k == slash) break;
    }
    if (m) matched = !p.exception();
  }
  return matched;
}

bool DockerIgnore::must_descend(std::string_view dir) const {
  if (!has_exceptions_) return false;
  std::string dir_slash = std::string(dir) + "/";
  for (const auto& p : patterns_)
    if (p.exception() && (p.text() + "/").starts_with(dir_slash)) return true;
  return false;
}

}  // namespace trainimg::builder
