// SPDX-License-Identifier: GPL-3.0-or-later
// The shell splitter: a RUN script -> simple commands in execution order.
// It is a tokenizer (words with quotes removed and offsets kept, operators,
// redirections, here-document bodies) and a flat parser that records how each
// command joins the previous one. Control keywords are stepped over, so the
// commands inside `if`/`for`/`while` bodies are still listed in text order.
#include <array>
#include <cctype>

#include "common/error.h"
#include "recipes/dockerfile/dockerfile.h"
#include "recipes/dockerfile/expand.h"

namespace trainimg::recipes {

std::string_view to_string(ShellOp op) {
  switch (op) {
    case ShellOp::First: return "";
    case ShellOp::And: return "&&";
    case ShellOp::Or: return "||";
    case ShellOp::Seq: return ";";
    case ShellOp::Pipe: return "|";
    case ShellOp::Background: return "&";
  }
  return "";
}

std::string Command::program() const {
  if (argv.empty()) return {};
  const std::string& p = argv[0].text;
  size_t slash = p.rfind('/');
  return slash == std::string::npos ? p : p.substr(slash + 1);
}

namespace {

struct Tok {
  enum Kind { kWord, kOp, kRedir, kNewline } kind = kWord;
  std::string op;    // operator text for kOp / kRedir
  Word word;         // kWord, or the target of a kRedir
  MappedText mt;     // word text with origins (for `sh -c` recursion)
  int heredoc = -1;  // kRedir `<<`: index into Lexer::heredocs
};

constexpr std::array<std::string_view, 21> kOps = {"&&",  "||",  ";;", "|&", "&>>", "&>", ">>",
                                                   "<<<", "<<-", "<<", ">&", "<&",  "<>", ">|",
                                                   ";",   "|",   "&",  "(",  ")",   ">",  "<"};

bool is_redirect(std::string_view op) {
  return op[0] == '<' || op[0] == '>' || op.substr(0, 2) == "&>";
}

class Lexer {
 public:
  Lexer(const MappedText& t, const Vars& vars, const SourceFile& f) : t_(t), s_(t.text), vars_(vars), f_(f) {}

  std::vector<Tok> run() {
    std::vector<Tok> out;
    while (true) {
      skip_blanks();
      if (i_ >= s_.size()) break;
      char c = s_[i_];
      if (c == '\n') {
        ++i_;
        out.push_back({Tok::kNewline, "\n", {}, {}, -1});
        read_heredoc_bodies();
        continue;
      }
      if (c == '#') {
        while (i_ < s_.size() && s_[i_] != '\n') ++i_;
        continue;
      }
      if (std::string_view op = match_op(i_); !op.empty()) {
        i_ += op.size();
        emit_op(out, std::string(op));
        continue;
      }
      // `2>file`, `2>&1`: a run of digits glued to a redirection is its fd.
      size_t d = i_;
      while (d < s_.size() && std::isdigit(static_cast<unsigned char>(s_[d]))) ++d;
      if (d > i_ && d < s_.size() && (s_[d] == '<' || s_[d] == '>')) {
        std::string op(match_op(d));
        i_ = d + op.size();
        emit_op(out, op);
        continue;
      }
      lex_words(out);
    }
    return out;
  }

  std::vector<MappedText> heredocs;

 private:
  struct Pending {
    std::string delim;
    bool strip_tabs;
    int index;
  };

  std::string_view match_op(size_t at) const {
    for (std::string_view op : kOps)
      if (s_.compare(at, op.size(), op) == 0) return op;
    return {};
  }

  void skip_blanks() {
    while (i_ < s_.size()) {
      if (s_[i_] == ' ' || s_[i_] == '\t' || s_[i_] == '\r')
        ++i_;
      else if (s_[i_] == '\\' && i_ + 1 < s_.size() && s_[i_ + 1] == '\n')
        i_ += 2;
      else
        break;
    }
  }

  void emit_op(std::vector<Tok>& out, std::string op) {
    if (!is_redirect(op)) {
      out.push_back({Tok::kOp, std::move(op), {}, {}, -1});
      return;
    }
    Tok r{Tok::kRedir, op, {}, {}, -1};
    skip_blanks();
    std::vector<Tok> target;
    if (i_ < s_.size() && !is_word_end(s_[i_])) lex_words(target, /*split=*/false);
    if (!target.empty()) {
      r.word = std::move(target[0].word);
      r.mt = std::move(target[0].mt);
    }
    if (op == "<<" || op == "<<-") {
      r.heredoc = static_cast<int>(heredocs.size());
      heredocs.emplace_back();
      pending_.push_back({r.word.text, op == "<<-", r.heredoc});
    }
    out.push_back(std::move(r));
  }

  // Reads the bodies of the here-documents opened on the line just ended.
  void read_heredoc_bodies() {
    for (const Pending& p : pending_) {
      MappedText& body = heredocs[p.index];
      while (i_ < s_.size()) {
        size_t e = s_.find('\n', i_);
        size_t next = e == std::string::npos ? s_.size() : e + 1;
        std::string_view line =
            std::string_view(s_).substr(i_, (e == std::string::npos ? s_.size() : e) - i_);
        std::string_view cmp = line;
        if (p.strip_tabs)
          while (!cmp.empty() && cmp[0] == '\t') cmp.remove_prefix(1);
        if (!cmp.empty() && cmp.back() == '\r') cmp.remove_suffix(1);
        if (cmp == p.delim) {
          i_ = next;
          break;
        }
        for (size_t k = i_; k < next; ++k) body.append(std::string_view(s_).substr(k, 1), t_.origin[k]);
        i_ = next;
      }
    }
    pending_.clear();
  }

  static bool is_word_end(char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == ';' || c == '&' || c == '|' || c == '(' ||
           c == ')' || c == '<' || c == '>';
  }

  [[noreturn]] void fail(size_t at, const std::string& what) const {
    Diagnostic d;
    d.file = f_.name();
    auto lc = f_.line_col(t_.origin[at]);
    d.line = lc.line;
    d.column = lc.column;
    d.length = 1;
    d.source_line = std::string(f_.line_text(lc.line));
    d.message = what;
    throw Error(d);
  }

  // Appends the raw text [b, e) to the word unchanged (command
  // substitutions, special parameters): the value is only known at run time.
  void copy_raw(size_t b, size_t e, MappedText& mt, std::vector<bool>& split, bool splittable) {
    for (size_t k = b; k < e; ++k) {
      mt.append(std::string_view(s_).substr(k, 1), t_.origin[k]);
      split.push_back(false);
    }
    (void)splittable;
  }

  // Index one past the `)` matching the `(` at `open`. Quotes, backquotes
  // and nested `$( )` inside count as the shell counts them, so the `)` in
  // `"$(echo ")")"` or the `'` in `"$(echo "in'ner")"` does not end it.
  size_t match_paren(size_t open) const {
    // Hostile input: `"$("$("$(…` recurses once a level; keep the stack bounded.
    struct Nest {
      int& n;
      explicit Nest(int& v) : n(++v) {}
      ~Nest() { --n; }
    } nest(nest_);
    if (nest_ > kMaxNest)
      fail(open - 1, "command substitutions nested deeper than " + std::to_string(kMaxNest));
    int depth = 0;
    for (size_t k = open; k < s_.size(); ++k) {
      char c = s_[k];
      if (c == '\\') {
        ++k;
      } else if (c == '$' && k + 1 < s_.size() && s_[k + 1] == '\'') {
        k = escaped_close(k + 1, '\'');
        if (k == std::string::npos) break;
      } else if (c == '\'') {
        k = s_.find('\'', k + 1);
        if (k == std::string::npos) break;
      } else if (c == '"') {
        k = match_double_quote(k);
        if (k == std::string::npos) break;
      } else if (c == '`') {
        k = match_backquote(k);
      } else if (c == '(') {
        ++depth;
      } else if (c == ')' && --depth == 0) {
        return k + 1;
      }
    }
    fail(open - 1, "unterminated command substitution");
  }

  // Index of the first `close` after `open` that no backslash escapes (npos
  // when there is none): a backquote's end, and a `$'…'` quote's (bash, ksh,
  // zsh, busybox sh, POSIX.1-2024 sh: `\'` does not end it).
  size_t escaped_close(size_t open, char close) const {
    for (size_t k = open + 1; k < s_.size(); ++k) {
      if (s_[k] == '\\')
        ++k;
      else if (s_[k] == close)
        return k;
    }
    return std::string::npos;
  }

  // Index of the `"` closing the one at `open` (npos when there is none).
  size_t match_double_quote(size_t open) const {
    for (size_t k = open + 1; k < s_.size(); ++k) {
      char c = s_[k];
      if (c == '\\')
        ++k;
      else if (c == '"')
        return k;
      else if (c == '$' && k + 1 < s_.size() && s_[k + 1] == '(')
        k = match_paren(k + 1) - 1;
      else if (c == '`')
        k = match_backquote(k);
    }
    return std::string::npos;
  }

  // Index of the backquote closing the one at `open`; `\``  inside is escaped.
  size_t match_backquote(size_t open) const {
    size_t k = escaped_close(open, '`');
    if (k == std::string::npos) fail(open, "unterminated backquote");
    return k;
  }

  // Expands `$…` at i_ into the word; returns whether it stayed unresolved.
  void dollar(MappedText& mt, std::vector<bool>& split, bool in_dq, bool& unresolved) {
    size_t b = i_;
    char n = i_ + 1 < s_.size() ? s_[i_ + 1] : '\0';
    if (n == '(') {
      i_ = match_paren(i_ + 1);
      copy_raw(b, i_, mt, split, false);
      unresolved = true;
      return;
    }
    if (n == '{' || std::isalpha(static_cast<unsigned char>(n)) || n == '_') {
      std::string val;
      bool u = false;
      i_ = expand_reference(s_, i_, vars_, '\\', val, u, /*sh=*/true, in_dq);
      if (u) unresolved = true;
      for (char c : val) {
        mt.append(std::string_view(&c, 1), t_.origin[b]);
        split.push_back(!in_dq && (c == ' ' || c == '\t' || c == '\n'));
      }
      // The whole reference maps to its `$`; make the end of the range right.
      mt.origin.back() = t_.origin[i_ - 1] + 1;
      return;
    }
    if (n != '\0' && std::string_view("@*#?-$!0123456789").find(n) != std::string_view::npos) {
      i_ += 2;
      copy_raw(b, i_, mt, split, false);
      unresolved = true;
      return;
    }
    ++i_;
    copy_raw(b, i_, mt, split, false);
  }

  void lex_words(std::vector<Tok>& out, bool do_split = true) {
    size_t start = i_;
    MappedText mt;
    mt.origin.push_back(t_.origin[i_]);
    std::vector<bool> split;
    bool quoted = false, unresolved = false;
    auto lit = [&](size_t k) {
      mt.append(std::string_view(s_).substr(k, 1), t_.origin[k]);
      split.push_back(false);
    };
    // `cmd` is kept as written, and the word is then unresolved.
    auto backquote = [&] {
      size_t e = match_backquote(i_);
      copy_raw(i_, e + 1, mt, split, false);
      unresolved = true;
      i_ = e + 1;
    };
    while (i_ < s_.size() && !is_word_end(s_[i_])) {
      char c = s_[i_];
      if (c == '\\') {
        if (i_ + 1 < s_.size() && s_[i_ + 1] != '\n') lit(i_ + 1);
        i_ += 2;
      } else if (c == '\'') {
        quoted = true;
        size_t e = s_.find('\'', i_ + 1);
        if (e == std::string::npos) fail(i_, "unterminated single quote");
        for (size_t k = i_ + 1; k < e; ++k) lit(k);
        i_ = e + 1;
      } else if (c == '"') {
        quoted = true;
        size_t q = i_++;
        while (true) {
          if (i_ >= s_.size()) fail(q, "unterminated double quote");
          char d = s_[i_];
          if (d == '"') break;
          if (d == '\\' && i_ + 1 < s_.size() &&
              std::string_view("$`\"\\\n").find(s_[i_ + 1]) != std::string_view::npos) {
            if (s_[i_ + 1] != '\n') lit(i_ + 1);
            i_ += 2;
          } else if (d == '$') {
            dollar(mt, split, true, unresolved);
          } else if (d == '`') {
            backquote();
          } else {
            lit(i_++);
          }
        }
        ++i_;
      } else if (c == '$' && i_ + 1 < s_.size() && s_[i_ + 1] == '\'') {
        // $'…': its text as written, `\'` and `\\` read as the character
        // (the other escapes are kept: nothing in the rules reads them).
        quoted = true;
        size_t e = escaped_close(i_ + 1, '\'');
        if (e == std::string::npos) fail(i_ + 1, "unterminated $'…' quote");
        for (size_t k = i_ + 2; k < e; ++k) {
          if (s_[k] == '\\' && (s_[k + 1] == '\'' || s_[k + 1] == '\\')) ++k;
          lit(k);
        }
        i_ = e + 1;
      } else if (c == '$') {
        dollar(mt, split, false, unresolved);
      } else if (c == '`') {
        backquote();
      } else {
        lit(i_++);
      }
    }
    std::string raw = s_.substr(start, i_ - start);
    Span whole = t_.span(start, i_ - start);
    // Field splitting of unquoted expansions: `$FLAGS` holding "-y -g" is two words.
    size_t b = 0;
    auto push = [&](size_t from, size_t to) {
      Tok t;
      t.kind = Tok::kWord;
      t.mt.text = mt.text.substr(from, to - from);
      t.mt.origin.assign(mt.origin.begin() + static_cast<long>(from),
                         mt.origin.begin() + static_cast<long>(to) + 1);
      t.word.text = t.mt.text;
      t.word.raw = raw;
      t.word.span = whole;
      t.word.quoted = quoted;
      t.word.unresolved = unresolved;
      out.push_back(std::move(t));
    };
    bool any_split = false;
    for (bool b2 : split) any_split = any_split || b2;
    if (!do_split || !any_split) {
      // An unquoted expansion to nothing is no word at all, as in the shell.
      if (!mt.text.empty() || quoted || !do_split) push(0, mt.text.size());
      return;
    }
    for (size_t k = 0; k <= mt.text.size(); ++k) {
      if (k == mt.text.size() || split[k]) {
        if (k > b) push(b, k);
        b = k + 1;
      }
    }
  }

  static constexpr int kMaxNest = 200;
  const MappedText& t_;
  const std::string& s_;
  const Vars& vars_;
  const SourceFile& f_;
  size_t i_ = 0;
  std::vector<Pending> pending_;
  mutable int nest_ = 0;
};

bool is_shell(const std::string& p) {
  return p == "sh" || p == "bash" || p == "dash" || p == "zsh" || p == "ash" || p == "ksh";
}

// A script without `#!`, or whose `#!` names a shell (directly or through
// `env [-S]`).
bool shebang_is_shell(std::string_view script) {
  if (!script.starts_with("#!")) return true;
  std::string_view line = script.substr(
      2, script.find('\n') == std::string_view::npos ? std::string_view::npos : script.find('\n') - 2);
  std::vector<std::string> words;
  for (size_t k = 0; k < line.size();) {
    size_t b = line.find_first_not_of(" \t\r", k);
    if (b == std::string_view::npos) break;
    size_t e = line.find_first_of(" \t\r", b);
    if (e == std::string_view::npos) e = line.size();
    words.emplace_back(line.substr(b, e - b));
    k = e;
  }
  auto base = [](const std::string& w) { return w.substr(w.find_last_of('/') + 1); };
  size_t i = 0;
  if (i < words.size() && base(words[i]) == "env")
    for (++i; i < words.size() && words[i].starts_with("-");) ++i;
  return i >= words.size() || is_shell(base(words[i]));
}

bool is_assignment(const Word& w) {
  size_t eq = w.raw.find('=');
  if (eq == std::string::npos || eq == 0) return false;
  if (!std::isalpha(static_cast<unsigned char>(w.raw[0])) && w.raw[0] != '_') return false;
  for (size_t k = 0; k < eq; ++k)
    if (!std::isalnum(static_cast<unsigned char>(w.raw[k])) && w.raw[k] != '_') return false;
  return true;
}

class Parser {
 public:
  Parser(const Vars& vars, const SourceFile& f, Script& out) : vars_(vars), f_(f), out_(out) {}

  void parse(const MappedText& text, int depth, int parent) {
    Lexer lx(text, vars_, f_);
    std::vector<Tok> toks = lx.run();
    ShellOp op = ShellOp::First;
    bool first = true;
    int level = depth;
    for (size_t k = 0; k < toks.size();) {
      const Tok& t = toks[k];
      if (t.kind == Tok::kNewline || (t.kind == Tok::kOp && (t.op == ";" || t.op == ";;"))) {
        if (!first) op = ShellOp::Seq;
        ++k;
        continue;
      }
      if (t.kind == Tok::kOp) {
        if (t.op == "&&")
          op = ShellOp::And;
        else if (t.op == "||")
          op = ShellOp::Or;
        else if (t.op == "|" || t.op == "|&")
          op = ShellOp::Pipe;
        else if (t.op == "&")
          op = ShellOp::Background;
        else if (t.op == "(")
          ++level;
        else if (t.op == ")")
          level = std::max(depth, level - 1);
        ++k;
        continue;
      }
      if (t.kind == Tok::kWord && !t.word.quoted && skip_keyword(toks, k)) continue;
      Pieces pc = collect(toks, k);
      if (pc.cmd.argv.empty() && pc.cmd.assignments.empty()) {
        // `RUN <<EOF` alone: the here-document is the script, which BuildKit
        // runs with the interpreter of its `#!` line when it has one: read
        // as shell unless that names another (python3, perl, node, …).
        for (int h : pc.heredocs)
          if (shebang_is_shell(lx.heredocs[h].text)) parse(lx.heredocs[h], level, parent);
        if (!pc.heredocs.empty()) first = false;
        continue;
      }
      pc.cmd.op = first ? ShellOp::First : op;
      pc.cmd.depth = level;
      pc.cmd.parent = parent;
      first = false;
      op = ShellOp::Seq;
      int self = static_cast<int>(out_.commands.size());
      out_.commands.push_back(pc.cmd);
      recurse(pc, self, level, lx);
    }
  }

 private:
  struct Pieces {
    Command cmd;
    std::vector<MappedText> argv_text;
    std::vector<int> heredocs;  // fed to stdin
  };

  // Steps over shell keywords that precede or close a command.
  bool skip_keyword(const std::vector<Tok>& toks, size_t& k) {
    const std::string& w = toks[k].word.raw;
    static const std::array<std::string_view, 13> kSkip = {
        "if", "then", "else", "elif", "fi", "do", "done", "while", "until", "{", "}", "!", "time"};
    for (auto s : kSkip)
      if (w == s) {
        ++k;
        return true;
      }
    if (w == "for" || w == "select") {  // `for x in a b c;` : the list is not commands
      while (k < toks.size() && toks[k].kind != Tok::kNewline &&
             !(toks[k].kind == Tok::kOp && toks[k].op == ";"))
        ++k;
      return true;
    }
    if (w == "case") {  // patterns are not commands; the branches are skipped (documented limit)
      while (k < toks.size() && !(toks[k].kind == Tok::kWord && toks[k].word.raw == "esac")) ++k;
      ++k;
      return true;
    }
    return false;
  }

  Pieces collect(const std::vector<Tok>& toks, size_t& k) {
    Pieces pc;
    bool in_prefix = true;
    bool have_span = false;
    size_t end = 0;
    for (; k < toks.size(); ++k) {
      const Tok& t = toks[k];
      if (t.kind == Tok::kNewline || t.kind == Tok::kOp) break;
      if (t.kind == Tok::kRedir) {
        if (t.heredoc >= 0)
          pc.heredocs.push_back(t.heredoc);
        else if (t.op.find('>') != std::string::npos && !t.word.text.empty())
          pc.cmd.redirects.push_back(t.word);
        continue;
      }
      if (!have_span) {
        pc.cmd.span.offset = t.word.span.offset;
        have_span = true;
      }
      end = t.word.span.offset + t.word.span.length;
      if (in_prefix && is_assignment(t.word)) {
        pc.cmd.assignments.push_back(t.word);
        continue;
      }
      in_prefix = false;
      pc.cmd.argv.push_back(t.word);
      pc.argv_text.push_back(t.mt);
    }
    if (have_span) pc.cmd.span.length = end - pc.cmd.span.offset;
    return pc;
  }

  // `sh -c 'script'`, `bash -euxo pipefail -c "…"`, `bash <<EOF`.
  void recurse(const Pieces& pc, int self, int level, Lexer& lx) {
    if (!is_shell(pc.cmd.program())) return;
    bool c_flag = false;
    const auto& argv = pc.cmd.argv;
    for (size_t a = 1; a < argv.size(); ++a) {
      const std::string& w = argv[a].text;
      if (w == "--") continue;
      if (w == "-o" || w == "+o") {
        ++a;
        continue;
      }
      if (w.size() > 1 && (w[0] == '-' || w[0] == '+') && w.rfind("--", 0) != 0) {
        if (w[0] == '-' && w.find('c') != std::string::npos) c_flag = true;
        if (w.back() == 'o') ++a;  // `-euxo pipefail`: -o takes the next word
        continue;
      }
      if (w.rfind("--", 0) == 0) continue;
      if (c_flag) parse(pc.argv_text[a], level + 1, self);
      return;  // `sh script.sh`: a file we cannot see
    }
    if (!c_flag)
      for (int h : pc.heredocs) parse(lx.heredocs[h], level + 1, self);
  }

  const Vars& vars_;
  const SourceFile& f_;
  Script& out_;
};

}  // namespace

Script split_shell(const MappedText& script, const Vars& vars, const SourceFile& file) {
  Script out;
  if (script.origin.empty()) return out;
  Parser(vars, file, out).parse(script, 0, -1);
  return out;
}

}  // namespace trainimg::recipes
