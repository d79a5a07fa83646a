// SPDX-License-Identifier: GPL-3.0-or-later
// ARG/ENV substitution in Dockerfile syntax, and MappedText.
#include "recipes/dockerfile/expand.h"

#include <cctype>

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

// Index one past the `}` that closes the `${` starting at `open` (nested
// braces counted); npos when unclosed.
size_t closing_brace(std::string_view s, size_t open) {
  int depth = 0;
  for (size_t i = open; i < s.size(); ++i) {
    if (s[i] == '{') ++depth;
    else if (s[i] == '}' && --depth == 0) return i + 1;
  }
  return std::string_view::npos;
}

}  // namespace

size_t expand_reference(std::string_view s, size_t i, const Vars& vars, char escape, std::string& out,
                        bool& unresolved) {
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
  size_t close = closing_brace(s, i + 1);
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
  std::string_view op = rest.substr(colon ? 1 : 0, 1);
  std::string_view word = rest.substr(colon ? 2 : 1);
  if (op != "-" && op != "+") return keep();  // ${VAR#x}, ${VAR%x}, ...: not resolved statically
  if (!known && !declared) return keep();
  bool set = known && (!colon || !it->second->empty());
  std::string w = expand_vars(word, vars, escape, &unresolved);
  if (op == "-") out += set ? *it->second : w;
  else out += set ? w : std::string();
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
