// SPDX-License-Identifier: GPL-3.0-or-later
#include "recipes/dockerfile/lines.h"

#include <algorithm>
#include <array>
#include <cctype>

#include "recipes/dockerfile/expand.h"

namespace trainimg::recipes {
namespace {

constexpr std::array<std::string_view, 18> kKeywords = {
    "ADD",   "ARG",        "CMD",     "COPY", "ENTRYPOINT", "ENV",        "EXPOSE", "FROM",   "HEALTHCHECK",
    "LABEL", "MAINTAINER", "ONBUILD", "RUN",  "SHELL",      "STOPSIGNAL", "USER",   "VOLUME", "WORKDIR"};

std::string upper(std::string_view s) {
  std::string o(s);
  for (auto& c : o) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return o;
}

std::string trim(std::string_view s) {
  size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return std::string(s.substr(b, e - b));
}

// One physical line: [begin, end) without the newline (and a trailing \r).
struct Line {
  size_t begin;
  size_t end;
  size_t next;
};

class LineReader {
 public:
  // BuildKit drops a UTF-8 byte-order mark at the start of the file.
  explicit LineReader(const std::string& s) : s_(s), pos_(s.rfind("\xEF\xBB\xBF", 0) == 0 ? 3 : 0) {}
  bool done() const { return pos_ >= s_.size(); }
  int number() const { return line_; }
  Line next() {
    size_t e = s_.find('\n', pos_);
    size_t nx = e == std::string::npos ? s_.size() : e + 1;
    if (e == std::string::npos) e = s_.size();
    size_t end = e;
    if (end > pos_ && s_[end - 1] == '\r') --end;
    Line l{pos_, end, nx};
    pos_ = nx;
    ++line_;
    return l;
  }

 private:
  const std::string& s_;
  size_t pos_;
  int line_ = 0;
};

// `# trainimg: ignore=a,b` -> {"a", "b"}; empty when it is another comment.
std::vector<std::string> pragma_ids(std::string_view comment) {
  std::string c = trim(comment.substr(1));
  const std::string_view kTag = "trainimg:";
  if (c.rfind(kTag, 0) != 0) return {};
  c = trim(c.substr(kTag.size()));
  if (c.rfind("ignore=", 0) != 0) return {};
  std::vector<std::string> ids;
  std::string rest = c.substr(7);
  size_t b = 0;
  while (b <= rest.size()) {
    size_t e = rest.find(',', b);
    if (e == std::string::npos) e = rest.size();
    std::string id = trim(std::string_view(rest).substr(b, e - b));
    if (!id.empty()) ids.push_back(id);
    b = e + 1;
  }
  return ids;
}

// Whether the line ends with the escape character (trailing blanks allowed);
// sets `cut` to where the kept text ends. As BuildKit's continuation pattern
// (`([^\\])\\[ \t]*$|^\\[ \t]*$`), an escape character right before it makes
// the pair an escaped escape: `RUN echo a\\` joins nothing.
bool continues(const std::string& s, Line l, char escape, size_t& cut) {
  size_t e = l.end;
  while (e > l.begin && (s[e - 1] == ' ' || s[e - 1] == '\t')) --e;
  if (e > l.begin && s[e - 1] == escape && !(e - 1 > l.begin && s[e - 2] == escape)) {
    cut = e - 1;
    return true;
  }
  cut = l.end;
  return false;
}

struct HeredocMark {
  std::string delim;
  bool strip_tabs;
  bool quoted;
  size_t at;  // original offset of `<<`
};

// Here-document introducers on an instruction line, found as BuildKit finds
// them: the line is split into blank-separated words (quotes and backslash
// escapes keep a word together) and a word is an introducer when it is
// `[N]<<[-]NAME` with a NAME that holds no `<`. The NAME is the rest of the
// word with its quotes removed (`<<END-OF-FILE`, `<<"EOF"`); a quote anywhere
// in it turns expansion off. So `cat<<EOF` and `cat << EOF` open nothing.
std::vector<HeredocMark> heredoc_marks(const MappedText& t) {
  std::vector<HeredocMark> out;
  const std::string& s = t.text;
  size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
    size_t b = i;
    char q = 0;
    for (; i < s.size(); ++i) {
      char c = s[i];
      if (q) {
        if (c == q)
          q = 0;
        else if (c == '\\' && q == '"')
          ++i;
      } else if (c == '\'' || c == '"') {
        q = c;
      } else if (c == '\\') {
        ++i;
      } else if (std::isspace(static_cast<unsigned char>(c))) {
        break;
      }
    }
    std::string_view word = std::string_view(s).substr(b, std::min(i, s.size()) - b);
    size_t k = 0;
    while (k < word.size() && std::isdigit(static_cast<unsigned char>(word[k]))) ++k;
    if (word.compare(k, 2, "<<") != 0) continue;
    HeredocMark m{{}, false, false, t.origin[b + k]};
    k += 2;
    if (k < word.size() && word[k] == '-') {
      m.strip_tabs = true;
      ++k;
    }
    std::string_view rest = word.substr(k);
    if (rest.empty() || rest.find('<') != std::string_view::npos) continue;
    for (size_t r = 0; r < rest.size(); ++r) {
      char c = rest[r];
      if (c == '\'' || c == '"') {
        m.quoted = true;
      } else if (c == '\\' && r + 1 < rest.size()) {
        m.delim += rest[++r];
      } else {
        m.delim += c;
      }
    }
    if (!m.delim.empty()) out.push_back(std::move(m));
  }
  return out;
}

void read_heredocs(const SourceFile& f, LineReader& lr, RawInstruction& ri) {
  const std::string& s = f.text();
  size_t start = std::string::npos;
  for (const HeredocMark& m : heredoc_marks(ri.args)) {
    Heredoc h;
    h.delimiter = m.delim;
    h.expand = !m.quoted;
    h.strip_tabs = m.strip_tabs;
    bool closed = false;
    size_t body_b = std::string::npos, body_e = 0;
    while (!lr.done()) {
      Line l = lr.next();
      if (start == std::string::npos) start = l.begin;
      std::string_view text(s.data() + l.begin, l.end - l.begin);
      std::string_view cmp = text;
      if (m.strip_tabs)
        while (!cmp.empty() && cmp[0] == '\t') cmp.remove_prefix(1);
      ri.end_line = lr.number();
      if (cmp == m.delim) {
        closed = true;
        ri.heredoc_text.append(std::string_view(s).substr(l.begin, l.next - l.begin), l.begin);
        break;
      }
      if (body_b == std::string::npos) body_b = l.begin;
      body_e = l.next;
      ri.heredoc_text.append(std::string_view(s).substr(l.begin, l.next - l.begin), l.begin);
      std::string_view line = std::string_view(s).substr(l.begin, l.next - l.begin);
      if (m.strip_tabs)
        while (!line.empty() && line[0] == '\t') line.remove_prefix(1);
      h.body.append(line);
    }
    if (!closed)
      fail_at(f, m.at, 2 + m.delim.size(),
              "unterminated here-document: no line '" + m.delim + "' before the end of the file",
              "end the here-document with a line holding only " + m.delim);
    if (body_b != std::string::npos) h.body_span = {body_b, body_e - body_b};
    ri.heredocs.push_back(std::move(h));
  }
}

// RUN, COPY and ADD read here-documents, also as the trigger of an ONBUILD
// (BuildKit's heredocDirectives and heredocCompoundDirectives).
bool takes_heredocs(const RawInstruction& ri) {
  auto host = [](std::string_view k) { return k == "RUN" || k == "COPY" || k == "ADD"; };
  if (host(ri.keyword)) return true;
  if (ri.keyword != "ONBUILD") return false;
  std::string_view a = ri.args.text;
  size_t b = 0;
  while (b < a.size() && std::isspace(static_cast<unsigned char>(a[b]))) ++b;
  size_t e = b;
  while (e < a.size() && !std::isspace(static_cast<unsigned char>(a[e]))) ++e;
  return host(upper(a.substr(b, e - b)));
}

void read_directive(std::string_view comment, RawDockerfile& out, const SourceFile& f, size_t at,
                    bool& open) {
  std::string c = trim(comment.substr(1));
  size_t eq = c.find('=');
  if (eq == std::string::npos) {
    open = false;
    return;
  }
  std::string key = trim(std::string_view(c).substr(0, eq));
  for (auto& ch : key) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  std::string val = trim(std::string_view(c).substr(eq + 1));
  // BuildKit's directive pattern needs a value: `# escape=` is a comment.
  if (val.empty() || (key != "syntax" && key != "escape" && key != "check")) {
    open = false;
    return;
  }
  if (out.directives.count(key)) {
    open = false;  // a repeated directive is a plain comment, as in BuildKit
    return;
  }
  if (key == "escape") {
    if (val != "\\" && val != "`")
      fail_at(f, at, comment.size(), "invalid escape directive '" + val + "': must be \\ or `");
    out.escape = val[0];
  }
  out.directives[key] = val;
}

}  // namespace

Diagnostic info_at(const SourceFile& f, size_t at, size_t len, std::string message) {
  Diagnostic d;
  d.severity = Severity::Info;
  d.file = f.name();
  auto lc = f.line_col(at);
  d.line = lc.line;
  d.column = lc.column;
  d.source_line = std::string(f.line_text(lc.line));
  d.length = static_cast<int>(std::max<size_t>(len, 1));
  d.message = std::move(message);
  return d;
}

RawDockerfile read_lines(const SourceFile& f, const std::string& frontend) {
  RawDockerfile out;
  const std::string& s = f.text();
  LineReader lr(s);
  bool directives_open = true;
  std::vector<std::string> pragma;
  int pragma_line = -1;
  while (!lr.done()) {
    Line l = lr.next();
    std::string_view text(s.data() + l.begin, l.end - l.begin);
    size_t ws = 0;
    while (ws < text.size() && std::isspace(static_cast<unsigned char>(text[ws]))) ++ws;
    if (ws == text.size()) {
      directives_open = false;
      continue;
    }
    if (text[ws] == '#') {
      if (directives_open) read_directive(text.substr(ws), out, f, l.begin + ws, directives_open);
      auto ids = pragma_ids(text.substr(ws));
      if (!ids.empty()) {
        pragma = std::move(ids);
        pragma_line = lr.number();
      }
      continue;
    }
    directives_open = false;
    size_t kb = l.begin + ws, ke = kb;
    while (ke < l.end && std::isalpha(static_cast<unsigned char>(s[ke]))) ++ke;
    RawInstruction ri;
    ri.keyword = upper(std::string_view(s).substr(kb, ke - kb));
    ri.keyword_offset = kb;
    ri.line = lr.number();
    bool known = std::find(kKeywords.begin(), kKeywords.end(), ri.keyword) != kKeywords.end();
    if (!known || (ke < l.end && !std::isspace(static_cast<unsigned char>(s[ke])))) {
      size_t we = kb;
      while (we < l.end && !std::isspace(static_cast<unsigned char>(s[we]))) ++we;
      auto syntax = out.directives.find("syntax");
      std::string front = syntax != out.directives.end() ? syntax->second : frontend;
      if (!front.empty()) {
        // A custom frontend (`# syntax=…`) may define instructions BuildKit's
        // own does not (INCLUDE+, …): skip this one, with its continuations.
        out.notes.push_back(info_at(f, kb, we - kb,
                                    "unknown instruction '" + std::string(s.substr(kb, we - kb)) +
                                        "' skipped: the frontend '" + front +
                                        "' may define it; trainimg does not check what it does"));
        RawDockerfile::Skipped sk;
        sk.word = std::string(s.substr(kb, we - kb));
        sk.offset = kb;
        sk.line = lr.number();
        size_t cut;
        Line cur{we, l.end, l.next};
        while (true) {
          bool more = continues(s, cur, out.escape, cut);
          sk.args.append(std::string_view(s).substr(cur.begin, cut - cur.begin), cur.begin);
          if (!more || lr.done()) break;
          cur = lr.next();
        }
        if (sk.args.origin.empty()) sk.args.origin.push_back(we);
        sk.end_line = lr.number();
        out.skipped.push_back(std::move(sk));
        out.skipped_before.push_back(out.instructions.size());
        pragma.clear();
        continue;
      }
      fail_at(f, kb, std::max<size_t>(we - kb, 1),
              "unknown instruction '" + std::string(s.substr(kb, we - kb)) + "'",
              "instructions are FROM, RUN, COPY, ADD, ENV, ARG, … (a continuation line may be missing its '" +
                  std::string(1, out.escape) + "')");
    }
    if (pragma_line == ri.line - 1) ri.ignore = pragma;
    // Continuations: join lines, dropping comment and blank lines inside.
    size_t cut;
    Line cur{ke, l.end, l.next};
    while (true) {
      bool more = continues(s, cur, out.escape, cut);
      ri.args.append(std::string_view(s).substr(cur.begin, cut - cur.begin), cur.begin);
      ri.end_line = lr.number();
      if (!more) break;
      bool got = false;
      while (!lr.done()) {
        Line n = lr.next();
        std::string_view nt(s.data() + n.begin, n.end - n.begin);
        std::string t = trim(nt);
        if (t.empty() || t[0] == '#') continue;
        cur = n;
        got = true;
        break;
      }
      if (!got) break;
    }
    if (ri.args.origin.empty()) ri.args.origin.push_back(ke);
    if (takes_heredocs(ri)) read_heredocs(f, lr, ri);
    out.instructions.push_back(std::move(ri));
  }
  return out;
}

}  // namespace trainimg::recipes
