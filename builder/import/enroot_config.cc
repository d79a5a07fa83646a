// SPDX-License-Identifier: GPL-3.0-or-later
#include "builder/import/enroot_config.h"

#include <locale.h>
#include <wctype.h>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <vector>

namespace trainimg::builder {

namespace {

// Decodes one UTF-8 sequence at s[i]; nullopt for an invalid, overlong or
// surrogate sequence (bash's mbrtowc rejects them too). `len` gets its length.
std::optional<char32_t> decode_utf8(std::string_view s, size_t i, size_t& len) {
  const auto b = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  unsigned char c = b(i);
  size_t n;
  char32_t cp;
  if (c >= 0xC2 && c <= 0xDF) {
    n = 2, cp = c & 0x1F;
  } else if (c >= 0xE0 && c <= 0xEF) {
    n = 3, cp = c & 0x0F;
  } else if (c >= 0xF0 && c <= 0xF4) {
    n = 4, cp = c & 0x07;
  } else {
    return std::nullopt;
  }
  if (i + n > s.size()) return std::nullopt;
  for (size_t k = 1; k < n; ++k) {
    if ((b(i + k) & 0xC0) != 0x80) return std::nullopt;
    cp = (cp << 6) | (b(i + k) & 0x3F);
  }
  if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10FFFF))) return std::nullopt;
  if (cp >= 0xD800 && cp <= 0xDFFF) return std::nullopt;
  len = n;
  return cp;
}

// Printability as bash sees it in a UTF-8 locale: glibc's iswprint through
// C.UTF-8 (present in every glibc >= 2.35), else a conservative guess.
bool printable(char32_t cp) {
  static const locale_t loc = newlocale(LC_CTYPE_MASK, "C.UTF-8", locale_t(0));
  if (loc != locale_t(0)) return iswprint_l(static_cast<wint_t>(cp), loc) != 0;
  return !(cp < 0x20 || (cp >= 0x7F && cp < 0xA0) || cp == 0x2028 || cp == 0x2029);
}

bool needs_ansi_c(std::string_view w) {
  for (size_t i = 0; i < w.size();) {
    auto c = static_cast<unsigned char>(w[i]);
    if (c < 0x80) {
      if (c < 0x20 || c == 0x7F) return true;
      ++i;
      continue;
    }
    size_t len = 0;
    auto cp = decode_utf8(w, i, len);
    if (!cp || !printable(*cp)) return true;
    i += len;
  }
  return false;
}

void octal(std::string& out, unsigned char c) {
  out += '\\';
  out += char('0' + ((c >> 6) & 7));
  out += char('0' + ((c >> 3) & 7));
  out += char('0' + (c & 7));
}

std::string ansi_c_quote(std::string_view w) {
  std::string out = "$'";
  for (size_t i = 0; i < w.size();) {
    auto c = static_cast<unsigned char>(w[i]);
    switch (c) {
      case 0x1B: out += "\\E"; ++i; continue;
      case '\a': out += "\\a"; ++i; continue;
      case '\v': out += "\\v"; ++i; continue;
      case '\b': out += "\\b"; ++i; continue;
      case '\f': out += "\\f"; ++i; continue;
      case '\n': out += "\\n"; ++i; continue;
      case '\r': out += "\\r"; ++i; continue;
      case '\t': out += "\\t"; ++i; continue;
      case '\\': out += "\\\\"; ++i; continue;
      case '\'': out += "\\'"; ++i; continue;
      default: break;
    }
    if (c < 0x80) {
      if (c < 0x20 || c == 0x7F) octal(out, c); else out += char(c);
      ++i;
      continue;
    }
    size_t len = 0;
    auto cp = decode_utf8(w, i, len);
    if (!cp) {  // an invalid byte: escaped alone, decoding restarts after it
      octal(out, c);
      ++i;
    } else if (!printable(*cp)) {
      for (size_t k = 0; k < len; ++k) octal(out, static_cast<unsigned char>(w[i + k]));
      i += len;
    } else {
      out.append(w.substr(i, len));
      i += len;
    }
  }
  out += '\'';
  return out;
}

// "${a[@]@Q}" of a whole array: the words quoted, joined by one space.
std::string quote_words(const std::vector<std::string>& words) {
  std::string out;
  for (const auto& w : words) {
    if (!out.empty()) out += ' ';
    out += bash_quote(w);
  }
  return out;
}

}  // namespace

std::string bash_quote(std::string_view word) {
  if (needs_ansi_c(word)) return ansi_c_quote(word);
  std::string out = "'";
  for (char c : word) {
    if (c == '\'') out += "'\\''"; else out += c;
  }
  out += '\'';
  return out;
}

std::string enroot_environment(const inspect::ImageConfig& c) {
  std::string out;
  for (const auto& e : c.env) out += e + "\n";
  return out;
}

std::string enroot_workdir(const inspect::ImageConfig& c) {
  std::string_view w = c.workdir;
  w = w.substr(0, w.find('\n'));
  const auto blank = [](char ch) { return ch == ' ' || ch == '\t'; };
  while (!w.empty() && blank(w.front())) w.remove_prefix(1);
  while (!w.empty() && blank(w.back())) w.remove_suffix(1);
  return w.empty() ? std::string("/") : std::string(w);
}

std::string enroot_rc(const inspect::ImageConfig& c, std::string_view uri) {
  std::string rc = "# enroot-provenance: " + std::string(uri) + "\n";
  for (const auto& [key, value] : c.labels) {
    std::string v = value;
    std::replace(v.begin(), v.end(), '\n', ' ');
    rc += "# " + key + " " + v + "\n";
  }
  rc += "\n";  // enroot: `[ -s rc ] && echo`, always true after the provenance line

  const std::string wd = enroot_workdir(c);
  const std::string ep = quote_words(c.entrypoint);
  const std::string cmd =
      c.entrypoint.empty() && c.cmd.empty() ? quote_words({"/bin/sh"}) : quote_words(c.cmd);
  rc += "mkdir -p \"" + wd + "\" 2> /dev/null\n";
  rc += "cd \"" + wd + "\" && unset OLDPWD || exit 1\n";
  rc += "\n";
  rc += "if [ -s /etc/rc.local ]; then\n";
  rc += "    . /etc/rc.local\n";
  rc += "fi\n";
  rc += "\n";
  rc += "if [ $# -gt 0 ]; then\n";
  // The spacing is enroot's heredoc with empty expansions kept: `exec  "$@"`.
  rc += "    exec " + ep + " \"$@\"\n";
  rc += "else\n";
  rc += "    exec " + ep + " " + cmd + "\n";
  rc += "fi\n";
  return rc;
}

std::string enroot_rc_local() {
  return "# This file is sourced by /etc/rc when the container starts.\n"
         "# It can be used to manipulate the entrypoint or the command of the container.\n";
}

std::string enroot_fstab(const inspect::ImageConfig& c) {
  std::vector<std::string> vols = c.volumes;
  std::sort(vols.begin(), vols.end());
  vols.erase(std::unique(vols.begin(), vols.end()), vols.end());
  std::string out;
  for (const auto& v : vols) out += "${ENROOT_ROOTFS}" + v + " " + v + " none x-create=dir,bind,rw,nosuid,nodev\n";
  return out;
}

}  // namespace trainimg::builder
