// SPDX-License-Identifier: GPL-3.0-or-later
#include <algorithm>
#include <cctype>
#include <filesystem>

#include "common/error.h"
#include "recipes/dockerfile/dockerfile.h"
#include "recipes/dockerfile/lines.h"

namespace trainimg::recipes {
namespace {

namespace fs = std::filesystem;

constexpr int kMaxDepth = 16;

struct Unread {
  size_t line;  // in the inlined text
  size_t column;
  size_t length;
  std::string message;
};

class Inliner {
 public:
  Inliner(std::vector<std::string> roots, std::string frontend)
      : roots_(std::move(roots)), frontend_(std::move(frontend)) {}

  void add(const SourceFile& f, const RawDockerfile& raw, std::vector<std::string>& stack) {
    int next = 1;  // next line of f to copy
    for (const auto& sk : raw.skipped) {
      std::string upper = sk.word;
      for (auto& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
      if (upper != "INCLUDE+") continue;
      copy(f, next, sk.line - 1);
      next = sk.line;
      std::string name = first_word(sk.args.text);
      std::string path = find(name);
      size_t col = f.line_col(sk.offset).column;
      if (path.empty() || std::find(stack.begin(), stack.end(), path) != stack.end() ||
          static_cast<int>(stack.size()) >= kMaxDepth) {
        std::string why = path.empty() ? "no file '" + name + "' in the build context (" + roots_text() + ")"
                          : static_cast<int>(stack.size()) >= kMaxDepth
                              ? "includes nest deeper than " + std::to_string(kMaxDepth)
                              : "'" + name + "' includes itself";
        unread_.push_back({origin_.size() + 1, col, sk.word.size(),
                           "INCLUDE+ " + name + ": " + why +
                               ": cannot tell what it holds (FROM, ARG, ENV, RUN); the rest is linted "
                               "without it"});
        continue;  // the line is kept; the parser skips it
      }
      SourceFile inc = SourceFile::read(path);
      RawDockerfile inner;
      try {
        inner = read_lines(inc, frontend_);
      } catch (const Error&) {
        inner = {};  // the parse of the whole reports it, in that file
      }
      stack.push_back(path);
      add(inc, inner, stack);
      stack.pop_back();
      next = sk.end_line + 1;
    }
    copy(f, next, f.line_count());
  }

  Inlined finish(const std::string& name) {
    Inlined out;
    out.text = SourceFile(name, std::move(text_));
    out.origin = std::move(origin_);
    for (const auto& u : unread_)
      out.notes.push_back(info_at(out.text, out.text.line_offset(static_cast<int>(u.line)) + u.column - 1,
                                  u.length, u.message));
    return out;
  }

 private:
  void copy(const SourceFile& f, int from, int to) {
    for (int l = from; l <= to; ++l) {
      text_.append(f.line_text(l));
      text_ += '\n';
      origin_.push_back({f.name(), l});
    }
  }

  static std::string first_word(const std::string& args) {
    size_t b = 0;
    while (b < args.size() && std::isspace(static_cast<unsigned char>(args[b]))) ++b;
    size_t e = b;
    while (e < args.size() && !std::isspace(static_cast<unsigned char>(args[e]))) ++e;
    std::string w = args.substr(b, e - b);
    if (w.size() >= 2 && (w[0] == '"' || w[0] == '\'') && w.back() == w[0]) w = w.substr(1, w.size() - 2);
    return w;
  }

  std::string find(const std::string& name) const {
    if (name.empty()) return {};
    std::error_code ec;
    if (name[0] == '/') return fs::is_regular_file(name, ec) ? name : std::string();
    for (const auto& r : roots_) {
      fs::path p = r.empty() || r == "." ? fs::path(name) : fs::path(r) / name;
      if (fs::is_regular_file(p, ec)) return p.lexically_normal().string();
    }
    return {};
  }

  std::string roots_text() const {
    std::string s;
    for (const auto& r : roots_) s += (s.empty() ? "" : ", ") + (r.empty() ? std::string(".") : r);
    return s;
  }

  std::vector<std::string> roots_;
  std::string frontend_;
  std::string text_;
  std::vector<LineOrigin> origin_;
  std::vector<Unread> unread_;
};

}  // namespace

Inlined inline_includes(const SourceFile& f, const std::vector<std::string>& roots) {
  Inlined same;
  same.text = f;
  for (int l = 1; l <= f.line_count(); ++l) same.origin.push_back({f.name(), l});
  RawDockerfile raw;
  try {
    raw = read_lines(f);
  } catch (const Error&) {
    return same;  // refused by the parse of `f` itself
  }
  auto syntax = raw.directives.find("syntax");
  if (syntax == raw.directives.end() || raw.skipped.empty()) return same;
  Inliner in(roots, syntax->second);
  std::vector<std::string> stack = {fs::path(f.name()).lexically_normal().string()};
  in.add(f, raw, stack);
  return in.finish(f.name());
}

void map_back(Diagnostic& d, const Inlined& in) {
  auto move = [&](std::string& file, int& line) {
    if (line < 1 || static_cast<size_t>(line) > in.origin.size() || file != in.text.name()) return;
    const LineOrigin& o = in.origin[static_cast<size_t>(line) - 1];
    file = o.file;
    line = o.line;
  };
  move(d.file, d.line);
  for (auto& r : d.related) move(r.file, r.line);
}

}  // namespace trainimg::recipes
