// SPDX-License-Identifier: GPL-3.0-or-later
// Dockerfile-level words (FROM, ENV, ARG, COPY, …) and the exec (JSON) form.
#include <cctype>
#include <nlohmann/json.hpp>

#include "common/error.h"
#include "recipes/dockerfile/expand.h"

namespace trainimg::recipes {

void fail_at(const SourceFile& f, size_t at, size_t len, const std::string& message, const std::string& hint) {
  Diagnostic d;
  d.file = f.name();
  auto lc = f.line_col(at);
  d.line = lc.line;
  d.column = lc.column;
  d.source_line = std::string(f.line_text(lc.line));
  int room = static_cast<int>(d.source_line.size()) - lc.column + 1;
  d.length = std::max(1, std::min(static_cast<int>(len), room));
  d.message = message;
  d.hint = hint;
  throw Error(d);
}

MappedText slice(const MappedText& t, size_t b, size_t e) {
  MappedText out;
  out.text = t.text.substr(b, e - b);
  out.origin.assign(t.origin.begin() + static_cast<long>(b), t.origin.begin() + static_cast<long>(e) + 1);
  return out;
}

std::vector<WordRange> split_words(const MappedText& t, size_t from, char escape, const SourceFile& f,
                                   bool lenient) {
  std::vector<WordRange> out;
  const std::string& s = t.text;
  size_t i = from;
  while (true) {
    while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
    if (i >= s.size()) break;
    size_t b = i;
    while (i < s.size() && !std::isspace(static_cast<unsigned char>(s[i]))) {
      char c = s[i];
      if (c == escape) {
        i += 2;
      } else if (c == '\'' || c == '"') {
        size_t q = i++;
        while (i < s.size() && s[i] != c) i += (c == '"' && s[i] == escape) ? 2 : 1;
        if (i >= s.size()) {
          if (lenient) break;
          fail_at(f, t.origin[q], 1,
                  std::string("unterminated ") + (c == '"' ? "double" : "single") + " quote");
        }
        ++i;
      } else {
        ++i;
      }
    }
    out.push_back({b, std::min(i, s.size())});
  }
  return out;
}

std::string unquote(std::string_view s, const Vars* vars, char escape, bool* unresolved) {
  std::string out;
  bool u = false;
  auto dollar = [&](size_t& i) {
    if (vars) {
      i = expand_reference(s, i, *vars, escape, out, u);
    } else {
      out += s[i++];
    }
  };
  for (size_t i = 0; i < s.size();) {
    char c = s[i];
    if (c == escape && i + 1 < s.size()) {
      out += s[i + 1];
      i += 2;
    } else if (c == '\'') {
      size_t e = s.find('\'', i + 1);
      if (e == std::string_view::npos) e = s.size();
      out.append(s.substr(i + 1, e - i - 1));
      i = e + 1;
    } else if (c == '"') {
      ++i;
      while (i < s.size() && s[i] != '"') {
        if (s[i] == escape && i + 1 < s.size() && (s[i + 1] == '"' || s[i + 1] == '$' || s[i + 1] == escape)) {
          out += s[i + 1];
          i += 2;
        } else if (s[i] == '$') {
          dollar(i);
        } else {
          out += s[i++];
        }
      }
      ++i;
    } else if (c == '$') {
      dollar(i);
    } else {
      out += c;
      ++i;
    }
  }
  if (unresolved && u) *unresolved = true;
  return out;
}

Word make_word(const MappedText& t, WordRange r, const Vars& vars, char escape) {
  Word w;
  w.raw = t.text.substr(r.b, r.e - r.b);
  w.text = unquote(w.raw, &vars, escape, &w.unresolved);
  w.quoted = w.raw.find_first_of("'\"") != std::string::npos;
  w.span = t.span(r.b, r.e - r.b);
  return w;
}

bool looks_like_json(const MappedText& t, size_t from, const SourceFile& f) {
  const std::string& s = t.text;
  size_t i = from;
  while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
  if (i >= s.size() || s[i] != '[') return false;
  // BuildKit (parseJSON): what json.Unmarshal refuses is shell form
  // (`CMD ["a", 'b']` runs `/bin/sh -c`); an array holding a non-string is an error.
  auto j = nlohmann::json::parse(std::string_view(s).substr(i), nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_array()) return false;
  for (const auto& e : j)
    if (!e.is_string())
      fail_at(f, t.origin[i], 1,
              "exec form (JSON array) holds a non-string (" + std::string(e.type_name()) + ")",
              "write [\"program\", \"arg\", …] with double-quoted strings only");
  return true;
}

namespace {

void put_utf8(unsigned cp, std::string& out) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

}  // namespace

std::vector<std::pair<Word, MappedText>> parse_json_array(const MappedText& t, size_t from, const SourceFile& f) {
  const std::string& s = t.text;
  std::vector<std::pair<Word, MappedText>> out;
  size_t i = from;
  auto ws = [&] {
    while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
  };
  auto bad = [&](const std::string& what) {
    fail_at(f, t.origin[std::min(i, s.size())], 1, "malformed exec form (JSON array of strings): " + what,
            "write [\"program\", \"arg\", …] with double-quoted strings, or use the shell form");
  };
  ws();
  ++i;  // '['
  ws();
  if (i < s.size() && s[i] == ']') {
    ++i;
  } else {
    while (true) {
      ws();
      if (i >= s.size() || s[i] != '"') bad("expected a string");
      size_t q = i++;
      MappedText mt;
      mt.origin.push_back(t.origin[i]);
      while (true) {
        if (i >= s.size()) {
          i = q;
          bad("unterminated string");
        }
        char c = s[i];
        if (c == '"') break;
        size_t at = t.origin[i];
        if (c == '\\') {
          if (i + 1 >= s.size()) bad("unterminated escape");
          char e = s[i + 1];
          std::string dec;
          size_t used = 2;
          switch (e) {
            case '"': dec = "\""; break;
            case '\\': dec = "\\"; break;
            case '/': dec = "/"; break;
            case 'b': dec = "\b"; break;
            case 'f': dec = "\f"; break;
            case 'n': dec = "\n"; break;
            case 'r': dec = "\r"; break;
            case 't': dec = "\t"; break;
            case 'u': {
              if (i + 6 > s.size()) bad("short \\u escape");
              unsigned cp = 0;
              for (size_t k = i + 2; k < i + 6; ++k) {
                if (!std::isxdigit(static_cast<unsigned char>(s[k]))) bad("bad \\u escape");
                cp = cp * 16 + static_cast<unsigned>(std::isdigit(static_cast<unsigned char>(s[k])) ? s[k] - '0' : (std::tolower(s[k]) - 'a' + 10));
              }
              put_utf8(cp, dec);
              used = 6;
              break;
            }
            default: bad(std::string("unknown escape \\") + e);
          }
          for (char d : dec) mt.append(std::string_view(&d, 1), at);
          i += used;
        } else {
          mt.append(std::string_view(&c, 1), at);
          ++i;
        }
      }
      ++i;  // closing quote
      Word w;
      w.text = mt.text;
      w.raw = s.substr(q, i - q);
      w.quoted = true;
      w.span = t.span(q, i - q);
      out.emplace_back(std::move(w), std::move(mt));
      ws();
      if (i < s.size() && s[i] == ',') {
        ++i;
        continue;
      }
      if (i < s.size() && s[i] == ']') {
        ++i;
        break;
      }
      bad("expected ',' or ']'");
    }
  }
  ws();
  if (i < s.size()) bad("unexpected text after ']'");
  return out;
}

}  // namespace trainimg::recipes
