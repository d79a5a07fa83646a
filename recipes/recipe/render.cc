// SPDX-License-Identifier: GPL-3.0-or-later
#include "recipes/recipe/render.h"

#include <algorithm>

#include "recipes/recipe/installer_flags.h"
#include "recipes/recipe/load.h"

namespace trainimg::recipes {

namespace {

// Appends rendered lines and their source map entries.
class Writer {
 public:
  explicit Writer(Rendered& out) : out_(out) {}

  // Starts a line produced as a whole by `w` (line 0: generated).
  void begin(const Where& w, int length = 0) {
    cur_.clear();
    entry_ = SourceMapEntry{w.file, w.line, w.column, length, {}};
  }
  void text(const std::string& s) { cur_ += s; }
  // Appends `s`, produced by node `w`; verbatim when it is the node's
  // exact text at a known position.
  void node(const std::string& s, const Where& w, bool verbatim, int length) {
    SourceSpan span;
    span.from = static_cast<int>(cur_.size()) + 1;
    span.to = span.from + static_cast<int>(s.size());
    span.file = w.file;
    span.line = w.line;
    span.column = w.column;
    span.verbatim = verbatim && w.line > 0;
    span.length = length;
    if (w.line > 0 || !w.file.empty()) entry_.spans.push_back(span);
    cur_ += s;
  }
  void node(const Text& t, const std::string& s) { node(s, t.start(), t.exact() && s == t.value, t.length); }
  void end() {
    out_.text += cur_ + "\n";
    out_.map.push_back(entry_);
  }
  void line(const std::string& s, const Where& w = {}) {
    begin(w);
    text(s);
    end();
  }
  void blank() { line(""); }

 private:
  Rendered& out_;
  std::string cur_;
  SourceMapEntry entry_;
};

bool needs_quotes(const std::string& v) {
  if (v.empty()) return true;
  for (char c : v)
    if (c == ' ' || c == '\t' || c == '"' || c == '\'' || c == '\\') return true;
  return false;
}

std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

// One physical line of a step's run text, stripped of its indentation.
struct RunLine {
  std::string text;
  Where where;  // of text's first character; line 0 when not exact
  bool exact = false;
};

std::vector<RunLine> run_lines(const Text& run) {
  std::vector<RunLine> out;
  size_t start = 0, k = 0;
  const std::string& v = run.value;
  while (start <= v.size()) {
    size_t e = v.find('\n', start);
    std::string piece = v.substr(start, e == std::string::npos ? std::string::npos : e - start);
    size_t ws = piece.find_first_not_of(" \t");
    RunLine l;
    if (ws != std::string::npos) {
      l.text = piece.substr(ws);
      while (!l.text.empty() && (l.text.back() == ' ' || l.text.back() == '\t')) l.text.pop_back();
      if (k < run.lines.size()) {
        l.where = run.lines[k];
        l.where.column += static_cast<int>(ws);
        l.exact = true;
      } else {
        l.where = run.where;
      }
    }
    out.push_back(l);
    if (e == std::string::npos) break;
    start = e + 1;
    ++k;
  }
  return out;
}

bool is_comment(const std::string& t) {
  return !t.empty() && t[0] == '#';
}

bool ends_with(const std::string& s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// The next line continues this command rather than starting a new one.
bool continues(const std::string& t) {
  return ends_with(t, "\\") || ends_with(t, "&&") || ends_with(t, "||") || ends_with(t, "|");
}

// Column (0-based) of a `#` that starts a shell comment outside quotes, or npos.
// A `#` starts a comment only at the start of a word: after an unescaped,
// unquoted blank.
size_t trailing_comment(const std::string& t) {
  char quote = 0;
  bool after_blank = false;
  for (size_t i = 0; i < t.size(); ++i) {
    char c = t[i];
    bool blank = false;
    if (quote == '\'') {
      if (c == '\'') quote = 0;
    } else if (c == '\\') {
      ++i;
    } else if (quote == '"') {
      if (c == '"') quote = 0;
    } else if (c == '"' || c == '\'') {
      quote = c;
    } else if (c == '#' && after_blank) {
      return i;
    } else {
      blank = c == ' ' || c == '\t';
    }
    after_blank = blank;
  }
  return std::string::npos;
}

void render_run(Writer& w, const Step& s) {
  std::vector<RunLine> lines;
  for (auto& l : run_lines(*s.run))
    if (!l.text.empty() && !is_comment(l.text)) lines.push_back(l);
  bool joined = s.shell == Shell::Join;
  for (size_t i = 0; i < lines.size(); ++i) {
    const RunLine& l = lines[i];
    bool first = i == 0;
    bool continuation = !first && continues(lines[i - 1].text);
    std::string prefix = first ? "RUN " : (joined && !continuation ? " && " : "    ");
    w.begin(l.where, static_cast<int>(l.text.size()));
    w.text(prefix);
    w.node(l.text, l.where, l.exact, static_cast<int>(l.text.size()));
    if (i + 1 < lines.size() && !ends_with(l.text, "\\")) w.text(" \\");
    w.end();
  }
}

void render_efa(Writer& w, const Recipe& r) {
  const Text& v = r.efa_installer;
  // Seed 002's own comment for stage 1.
  w.line(
      "# 1. EFA installer (container-specific: exclude kernel modules). Run apt-get update first in the same "
      "RUN.");
  w.begin(r.efa_where, 3);
  w.text("RUN apt-get update \\");
  w.end();
  if (!r.apt.empty()) {
    w.begin(r.apt_where);
    w.text(" && apt-get install -y --no-install-recommends");
    for (const auto& p : r.apt) {
      w.text(" ");
      w.node(p, p.value);
    }
    w.text(" \\");
    w.end();
  }
  w.line(" && cd /tmp \\", r.efa_where);
  std::string tarball = "aws-efa-installer-${EFA_INSTALLER_VERSION}.tar.gz";
  // The download URL as a whole is "which installer": findings on it
  // (a version other than the host's) belong to efa.installer.
  w.begin(v.where, v.length);
  w.text(" && curl -fsSL -O ");
  w.node(r.efa_mirror.value + "/" + tarball, v.where, false, v.length);
  w.text(" \\");
  w.end();
  w.begin(v.where, v.length);
  w.text(" && tar -xf ");
  w.node(tarball, v.where, false, v.length);
  w.text(" \\");
  w.end();
  w.line(" && cd aws-efa-installer \\", r.efa_where);
  w.begin(r.efa_where, 3);
  w.text(" && ./efa_installer.sh " + std::string(kContainerFlags));
  for (const auto& f : r.efa_flags) {
    const InstallerFlag* known = find_installer_flag(f.value);
    if (known && known->container_set) continue;  // already there, by another spelling
    w.text(" ");
    w.node(f, f.value);
  }
  w.text(" \\");
  w.end();
  w.line(" && cd / && rm -rf /tmp/aws-efa-installer* /var/lib/apt/lists/*", r.efa_where);
  w.blank();
  w.line("ENV LD_LIBRARY_PATH=/opt/amazon/ofi-nccl/lib:/opt/amazon/efa/lib:${LD_LIBRARY_PATH}", r.efa_where);
}

void render_pair(Writer& w, const char* keyword, const NamedValue& kv, bool arg) {
  w.begin(kv.key.where, kv.key.length);
  w.text(std::string(keyword) + " ");
  w.node(kv.key, kv.key.value);
  if (arg && !kv.has_value) return w.end();
  w.text("=");
  std::string word = dockerfile_word(kv.value.value);
  if (kv.has_value)
    w.node(kv.value, word);
  else
    w.text(word);
  w.end();
}

void render_copy(Writer& w, const CopySpec& c) {
  w.begin(c.where);
  if (needs_quotes(c.src.value) || needs_quotes(c.dst.value)) {
    w.text("COPY [");
    w.node(json_string(c.src.value), c.src.where, false, c.src.length);
    w.text(", ");
    w.node(json_string(c.dst.value), c.dst.where, false, c.dst.length);
    w.text("]");
  } else {
    w.text("COPY ");
    w.node(c.src, c.src.value);
    w.text(" ");
    w.node(c.dst, c.dst.value);
  }
  w.end();
}

void render_image_command(Writer& w, const char* keyword, const ImageCommand& c) {
  w.begin(c.where);
  w.text(std::string(keyword) + " ");
  if (!c.exec_form) {
    w.node(c.words[0], c.words[0].value);
  } else {
    w.text("[");
    for (size_t i = 0; i < c.words.size(); ++i) {
      if (i) w.text(", ");
      const Text& t = c.words[i];
      w.node(json_string(t.value), t.where, false, t.length);
    }
    w.text("]");
  }
  w.end();
}

}  // namespace

std::string dockerfile_word(const std::string& v) {
  if (!needs_quotes(v)) return v;
  return json_string(v);  // Dockerfile double quotes escape '"' and '\' the same way
}

Rendered render_dockerfile(const Recipe& r) {
  Rendered out;
  Writer w(out);
  w.line("# Rendered by trainimg render from " + r.file + "; edit the recipe and render again.");
  for (const auto& o : r.overrides) w.line("# --set " + o);
  w.begin(r.base.where, r.base.length);
  w.text("FROM ");
  if (r.platform) {
    w.text("--platform=");
    w.node(*r.platform, r.platform->value);
    w.text(" ");
  }
  w.node(r.base, r.base.value);
  w.end();
  w.blank();
  w.begin(r.efa_installer.where, r.efa_installer.length);
  w.text("ARG EFA_INSTALLER_VERSION=");
  w.node(r.efa_installer, r.efa_installer.value);
  w.end();
  for (const auto& a : r.args) render_pair(w, "ARG", a, true);
  w.blank();
  render_efa(w, r);
  int n = 2;
  for (const auto& s : r.steps) {
    w.blank();
    std::string title = "# " + std::to_string(n++) + ". " + s.name.value;
    if (s.description) title += ": " + s.description->value;
    w.line(title, s.name.where);
    for (const auto& e : s.env) render_pair(w, "ENV", e, false);
    for (const auto& c : s.copy) render_copy(w, c);
    if (s.run) render_run(w, s);
  }
  if (!r.labels.empty() || r.workdir || r.entrypoint || r.cmd) {
    w.blank();
    w.line("# Image configuration");
    for (const auto& l : r.labels) render_pair(w, "LABEL", l, false);
    if (r.workdir) {
      w.begin(r.workdir->where, r.workdir->length);
      w.text("WORKDIR ");
      w.node(*r.workdir, r.workdir->value);
      w.end();
    }
    if (r.entrypoint) render_image_command(w, "ENTRYPOINT", *r.entrypoint);
    if (r.cmd) render_image_command(w, "CMD", *r.cmd);
  }
  return out;
}

std::vector<Diagnostic> check_run_text(const Recipe& r) {
  std::vector<Diagnostic> out;
  for (const auto& s : r.steps) {
    if (!s.run) continue;
    for (const auto& l : run_lines(*s.run)) {
      if (l.text.empty() || is_comment(l.text)) continue;
      size_t c = trailing_comment(l.text);
      if (c == std::string::npos) continue;
      Where w = l.where;
      if (l.exact) w.column += static_cast<int>(c);
      out.push_back(Finding(recipe_schema_rule(),
                            "a '#' comment at the end of a run line would swallow the commands joined "
                            "after it")
                        .hint("put the comment on a line of its own (comment lines are dropped)")
                        .at_node(w, static_cast<int>(l.text.size() - c)));
    }
  }
  return out;
}

namespace {

// Maps one rendered position (file/line/column/length of a Diagnostic or a
// RelatedLocation) onto the recipe; false when the line has no recipe
// position.
template <class Loc>
bool map_location(const std::vector<SourceMapEntry>& map, Loc& d) {
  if (d.line < 1 || static_cast<size_t>(d.line) > map.size()) return false;
  const SourceMapEntry& e = map[d.line - 1];
  for (const auto& s : e.spans) {
    if (d.column < s.from || d.column >= s.to) continue;
    d.file = s.file;
    d.line = s.line;
    if (s.verbatim) {
      int rendered = d.column;
      d.column = s.column + (rendered - s.from);
      d.length = std::min(std::max(d.length, 1), s.to - rendered);
    } else {
      d.column = s.column;
      d.length = std::max(1, s.length);
    }
    if (s.line == 0) d.column = d.length = 0;
    return true;
  }
  if (e.line == 0 && e.file.empty()) return false;
  d.file = e.file;
  d.line = e.line;
  d.column = e.column;
  d.length = e.line > 0 ? std::max(1, e.length) : 0;
  return true;
}

}  // namespace

bool map_to_recipe(const std::vector<SourceMapEntry>& map, Diagnostic& d) {
  return map_location(map, d);
}

bool map_to_recipe(const std::vector<SourceMapEntry>& map, RelatedLocation& r) {
  return map_location(map, r);
}

}  // namespace trainimg::recipes
