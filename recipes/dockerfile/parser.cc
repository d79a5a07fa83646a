// SPDX-License-Identifier: GPL-3.0-or-later
// Second pass of the Dockerfile parser: each raw instruction becomes an
// Instruction (flags, exec or shell form, words, KEY=VALUE pairs, the RUN
// script), while ARG/ENV scopes and stages are tracked as BuildKit does:
// ARGs before the first FROM are only visible in FROM lines and in stages that
// re-declare them; ENV is inherited by stages built FROM a stage.
#include <algorithm>
#include <cctype>

#include "common/error.h"
#include "recipes/dockerfile/dockerfile.h"
#include "recipes/dockerfile/expand.h"
#include "recipes/dockerfile/lines.h"

namespace trainimg::recipes {

const Flag* Instruction::flag(std::string_view name) const {
  for (const auto& f : flags)
    if (f.name == name) return &f;
  return nullptr;
}

const std::string& Dockerfile::root_image(const Stage& s) const {
  const Stage* cur = &s;
  while (cur->base_stage >= 0) cur = &stages[static_cast<size_t>(cur->base_stage)];
  return cur->base;
}

bool is_ngc_image(std::string_view image) {
  std::string lower(image);
  for (auto& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return lower.rfind("nvcr.io/nvidia/", 0) == 0;
}

namespace {

std::string lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// Whether an image is a Windows one, whose default shell is `cmd /S /C`
// (Microsoft's servercore/nanoserver bases, the full `windows` image, .NET
// Framework's, which exist only for Windows, and the tags built on them).
bool windows_image(const std::string& image) {
  std::string i = lower(image);
  for (const char* w : {"mcr.microsoft.com/windows/", "mcr.microsoft.com/windows:",
                        "mcr.microsoft.com/dotnet/framework/", "windowsservercore", "nanoserver"})
    if (i.find(w) != std::string::npos) return true;
  return false;
}

// Whether a SHELL's argv runs a POSIX shell: one of its words is sh, bash,
// dash, ash, ksh, mksh, zsh or busybox (also behind `env`, `conda run …`), not
// cmd.exe, PowerShell, python3 -c or another interpreter.
bool is_posix_shell(const std::vector<Word>& argv) {
  for (const Word& w : argv) {
    std::string p = lower(w.text);
    size_t sep = p.find_last_of("/\\");
    if (sep != std::string::npos) p = p.substr(sep + 1);
    if (p.size() > 4 && p.compare(p.size() - 4, 4, ".exe") == 0) p.resize(p.size() - 4);
    for (const char* sh : {"sh", "bash", "dash", "ash", "ksh", "mksh", "zsh", "busybox"})
      if (p == sh) return true;
  }
  return false;
}

class Builder {
 public:
  Builder(const SourceFile& f, RawDockerfile raw) : f_(f), raw_(std::move(raw)) {}

  Dockerfile build() {
    Dockerfile df;
    df.file = f_.name();
    df.escape = raw_.escape;
    df.directives = raw_.directives;
    df.notes = raw_.notes;
    if (raw_.instructions.empty())
      fail_at(f_, 0, 1, "empty Dockerfile: no instructions", "a Dockerfile starts with FROM IMAGE");
    size_t skipped = 0;  // raw_.skipped before the current instruction
    for (size_t i = 0; i < raw_.instructions.size(); ++i) {
      const RawInstruction& ri = raw_.instructions[i];
      while (skipped < raw_.skipped.size() && raw_.skipped_before[skipped] <= i) ++skipped;
      if (ri.keyword == "FROM") {
        start_stage(df, ri);
        continue;
      }
      if (df.stages.empty() && ri.keyword != "ARG" && skipped > 0) {
        // A custom frontend's instruction (`INCLUDE+ base.Dockerfile`) may
        // bring the FROM: the frontend decides, so this is no refusal.
        start_unknown_stage(df, raw_.skipped[skipped - 1], &ri);
      }
      if (df.stages.empty()) {
        if (ri.keyword != "ARG")
          fail_at(f_, ri.keyword_offset, ri.keyword.size(), ri.keyword + " before the first FROM",
                  "only ARG may come before the first FROM");
        Instruction in = common(ri, global());
        apply_arg(in, global_, /*global=*/true);
        global_shared_.reset();
        df.global_args.push_back(std::move(in));
        continue;
      }
      Instruction in = common(ri, merged());
      if (ri.keyword == "SHELL" && !in.args.empty()) posix_shell_ = is_posix_shell(in.args);
      if (ri.keyword == "ARG")
        apply_arg(in, args_, false);
      else if (ri.keyword == "ENV")
        apply_env(in);
      if (ri.keyword == "ARG" || ri.keyword == "ENV") merged_.reset();
      df.stages.back().instructions.push_back(std::move(in));
    }
    if (df.stages.empty() && !raw_.skipped.empty()) start_unknown_stage(df, raw_.skipped.front(), nullptr);
    if (df.stages.empty())
      fail_at(f_, raw_.instructions.back().keyword_offset, 3, "no FROM instruction",
              "a Dockerfile needs FROM IMAGE");
    end_env_.push_back(env_);
    end_args_.push_back(args_);
    end_shell_.push_back(posix_shell_);
    // The final stage and the stages it is built FROM end up in the image.
    for (int i = static_cast<int>(df.stages.size()) - 1; i >= 0;
         i = df.stages[static_cast<size_t>(i)].base_stage)
      df.stages[static_cast<size_t>(i)].in_final_image = true;
    return df;
  }

 private:
  // ARG and ENV of the stage (ENV wins), rebuilt only after one changed.
  std::shared_ptr<const Vars> merged() {
    if (!merged_) {
      auto v = std::make_shared<Vars>(args_);
      for (const auto& [k, val] : env_) (*v)[k] = val;
      merged_ = std::move(v);
    }
    return merged_;
  }
  std::shared_ptr<const Vars> global() {
    if (!global_shared_) global_shared_ = std::make_shared<const Vars>(global_);
    return global_shared_;
  }

  void start_stage(Dockerfile& df, const RawInstruction& ri) {
    if (!df.stages.empty()) {
      end_env_.push_back(env_);
      end_args_.push_back(args_);
      end_shell_.push_back(posix_shell_);
    }
    Instruction in = common(ri, global());
    Stage st;
    st.index = static_cast<int>(df.stages.size());
    if (in.args.empty())
      fail_at(f_, ri.keyword_offset, 4, "FROM without an image", "write FROM IMAGE[:TAG] [AS NAME]");
    st.base = in.args[0].text;
    if (in.args.size() == 3 && lower(in.args[1].text) == "as") {
      st.name = lower(in.args[2].text);
    } else if (in.args.size() != 1) {
      const Word& w = in.args[in.args.size() >= 2 ? 1 : 0];
      fail_at(f_, w.span.offset, w.span.length, "FROM takes IMAGE [AS NAME]",
              "write FROM IMAGE[:TAG] [AS NAME]");
    }
    env_.clear();
    args_.clear();
    merged_.reset();
    const Flag* platform = in.flag("platform");
    posix_shell_ = !windows_image(st.base) && !(platform && lower(platform->value).starts_with("windows"));
    for (const auto& prev : df.stages)
      if (!prev.name.empty() && prev.name == lower(st.base)) {
        st.base_stage = prev.index;
        env_ = end_env_[static_cast<size_t>(prev.index)];
        // BuildKit starts the stage from its base's state, whose environment
        // holds that stage's ARG values too (dispatchState: buildArgs and
        // state are inherited).
        args_ = end_args_[static_cast<size_t>(prev.index)];
        posix_shell_ = end_shell_[static_cast<size_t>(prev.index)];
      }
    st.instructions.push_back(std::move(in));
    df.stages.push_back(std::move(st));
  }

  // The stage an instruction before any FROM opens when a skipped custom
  // instruction may have brought the FROM: its base cannot be told.
  void start_unknown_stage(Dockerfile& df, const RawDockerfile::Skipped& sk, const RawInstruction* first) {
    Stage st;
    st.base_unknown = true;
    env_.clear();
    args_.clear();
    merged_.reset();
    posix_shell_ = true;
    df.stages.push_back(std::move(st));
    std::string what =
        first ? first->keyword + " comes before any FROM of this file" : "this file has no FROM";
    size_t at = first ? first->keyword_offset : sk.offset;
    size_t len = first ? first->keyword.size() : sk.word.size();
    df.notes.push_back(info_at(f_, at, len,
                               what + ": the '" + sk.word + (first ? "' before it" : "' here") +
                                   " may bring one (the frontend decides); the base cannot be "
                                   "told, what follows is linted on an unknown base"));
  }

  Instruction common(const RawInstruction& ri, std::shared_ptr<const Vars> shared) {
    const Vars& vars = *shared;
    Instruction in;
    in.keyword = ri.keyword;
    in.line = ri.line;
    in.column = f_.line_col(ri.keyword_offset).column;
    in.end_line = ri.end_line;
    in.span = {ri.keyword_offset, ri.keyword.size()};
    in.vars = std::move(shared);
    in.ignore = ri.ignore;
    in.heredocs = ri.heredocs;
    in.text = ri.args;
    size_t pos = parse_flags(in, vars);
    {
      std::string all = in.text.text;
      size_t x = 0, y = all.size();
      while (x < y && std::isspace(static_cast<unsigned char>(all[x]))) ++x;
      while (y > x && std::isspace(static_cast<unsigned char>(all[y - 1]))) --y;
      in.raw_args = all.substr(x, y - x);
    }
    static const char* kExec[] = {"RUN", "CMD", "ENTRYPOINT", "SHELL", "COPY", "ADD", "VOLUME"};
    bool exec_capable =
        std::any_of(std::begin(kExec), std::end(kExec), [&](const char* k) { return in.keyword == k; });
    if (exec_capable && looks_like_json(in.text, pos, f_)) {
      in.json_form = true;
      auto elems = parse_json_array(in.text, pos, f_);
      for (auto& [w, mt] : elems) in.args.push_back(w);
      if (in.keyword == "RUN") exec_script(in, elems);
      return in;
    }
    if (in.keyword == "SHELL")
      fail_at(f_, ri.keyword_offset, 5, "SHELL needs the exec form", "write SHELL [\"/bin/bash\", \"-c\"]");
    if (in.keyword == "RUN") {
      // Under `SHELL ["cmd", "/S", "/C"]` or PowerShell the script is not
      // POSIX shell: it is not split (there is nothing for the rules there).
      if (!posix_shell_) return in;
      MappedText script = slice(in.text, pos, in.text.text.size());
      if (!ri.heredocs.empty()) {
        script.append("\n", script.origin.back());
        for (size_t k = 0; k < ri.heredoc_text.text.size(); ++k)
          script.append(std::string_view(ri.heredoc_text.text).substr(k, 1), ri.heredoc_text.origin[k]);
      }
      in.script = split_shell(script, vars, f_);
      return in;
    }
    // BuildKit expands (and so lexes) the words of every instruction but
    // these: their quotes are the shell's business at run time.
    static const char* kUnexpanded[] = {"CMD", "ENTRYPOINT", "HEALTHCHECK", "MAINTAINER", "ONBUILD"};
    bool lenient = std::any_of(std::begin(kUnexpanded), std::end(kUnexpanded),
                               [&](const char* k) { return in.keyword == k; });
    for (WordRange r : split_words(in.text, pos, raw_.escape, f_, lenient))
      in.args.push_back(make_word(in.text, r, vars, raw_.escape));
    if (in.keyword == "ENV" || in.keyword == "LABEL" || in.keyword == "ARG") parse_pairs(in, pos, vars);
    return in;
  }

  // `--from=builder`, `--mount=type=cache,target=/x`, `--platform=$P`.
  size_t parse_flags(Instruction& in, const Vars& vars) {
    static const char* kFlagged[] = {"RUN", "COPY", "ADD", "FROM", "HEALTHCHECK"};
    if (std::none_of(std::begin(kFlagged), std::end(kFlagged),
                     [&](const char* k) { return in.keyword == k; }))
      return 0;
    size_t pos = 0;
    const std::string& s = in.text.text;
    while (true) {
      size_t b = pos;
      while (b < s.size() && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
      if (s.compare(b, 2, "--") != 0) return pos;
      auto words = split_words(in.text, b, raw_.escape, f_, /*lenient=*/true);
      WordRange r = words.front();
      std::string raw = s.substr(r.b + 2, r.e - r.b - 2);
      Flag fl;
      size_t eq = raw.find('=');
      fl.name = lower(raw.substr(0, eq));
      if (eq != std::string::npos) fl.value = unquote(raw.substr(eq + 1), &vars, raw_.escape);
      fl.span = in.text.span(r.b, r.e - r.b);
      in.flags.push_back(std::move(fl));
      pos = r.e;
    }
  }

  void exec_script(Instruction& in, const std::vector<std::pair<Word, MappedText>>& elems) {
    Command c;
    for (const auto& [w, mt] : elems) c.argv.push_back(w);
    if (!elems.empty()) {
      size_t b = elems.front().first.span.offset;
      const Span& last = elems.back().first.span;
      c.span = {b, last.offset + last.length - b};
    }
    in.script.commands.push_back(c);
    // ["sh", "-c", "script"]: the script is what runs.
    std::string p = c.program();
    if (elems.size() >= 3 && (p == "sh" || p == "bash" || p == "dash") && elems[1].first.text == "-c") {
      Script inner = split_shell(elems[2].second, *in.vars, f_);
      for (auto& ic : inner.commands) {
        ic.depth += 1;
        ic.parent = ic.parent < 0 ? 0 : ic.parent + 1;
        in.script.commands.push_back(std::move(ic));
      }
    }
  }

  void parse_pairs(Instruction& in, size_t pos, const Vars& vars) {
    auto words = split_words(in.text, pos, raw_.escape, f_);
    if (words.empty())
      fail_at(f_, in.span.offset, in.span.length,
              in.keyword + " needs at least one NAME" + (in.keyword == "ARG" ? "" : "=VALUE"));
    const std::string& s = in.text.text;
    std::string first = s.substr(words[0].b, words[0].e - words[0].b);
    if ((in.keyword == "ENV" || in.keyword == "LABEL") && first.find('=') == std::string::npos) {
      // Legacy `ENV KEY VALUE…` / `LABEL KEY VALUE…` (BuildKit's parseNameVal):
      // the rest of the line is the value.
      KeyValue kv;
      kv.key = first;
      kv.key_span = in.text.span(words[0].b, first.size());
      size_t vb = words.size() > 1 ? words[1].b : words[0].e;
      size_t ve = words.back().e;
      if (words.size() < 2)
        fail_at(f_, kv.key_span.offset, kv.key_span.length, in.keyword + " " + first + " has no value",
                "write " + in.keyword + " " + first + "=VALUE");
      std::string raw = s.substr(vb, ve - vb);
      kv.has_value = true;
      kv.value = unquote(raw, &vars, raw_.escape, &kv.unresolved);
      kv.raw_value = unquote(raw, nullptr, raw_.escape);
      kv.value_span = in.text.span(vb, ve - vb);
      in.pairs.push_back(std::move(kv));
      return;
    }
    for (WordRange r : words) {
      std::string raw = s.substr(r.b, r.e - r.b);
      size_t eq = raw.find('=');
      KeyValue kv;
      kv.key = unquote(raw.substr(0, eq), nullptr, raw_.escape);
      kv.key_span = in.text.span(r.b, eq == std::string::npos ? raw.size() : eq);
      if (eq == std::string::npos) {
        if (in.keyword != "ARG")
          fail_at(f_, kv.key_span.offset, kv.key_span.length, in.keyword + " " + raw + " has no '='",
                  "write " + in.keyword + " NAME=VALUE");
        kv.value_span = {kv.key_span.offset + kv.key_span.length, 0};
      } else {
        std::string v = raw.substr(eq + 1);
        kv.has_value = true;
        kv.value = unquote(v, &vars, raw_.escape, &kv.unresolved);
        kv.raw_value = unquote(v, nullptr, raw_.escape);
        kv.value_span = in.text.span(r.b + eq + 1, v.size());
      }
      // BuildKit refuses only a blank name (`ARG =x`); any other word is a
      // name, so `ARG V=1   # why` declares V and the ARGs '#' and 'why'.
      if (kv.key.empty())
        fail_at(f_, in.text.origin[r.b], 1, in.keyword + " names can not be blank",
                "write " + in.keyword + " NAME=VALUE");
      in.pairs.push_back(std::move(kv));
    }
  }

  void apply_arg(const Instruction& in, Vars& scope, bool global) {
    for (const auto& kv : in.pairs) {
      if (kv.has_value)
        scope[kv.key] = kv.value;
      else if (!global && global_.count(kv.key))
        scope[kv.key] = global_.at(kv.key);
      else if (!scope.count(kv.key))
        scope[kv.key] = std::nullopt;
    }
  }

  void apply_env(const Instruction& in) {
    for (const auto& kv : in.pairs) env_[kv.key] = kv.value;
  }

  const SourceFile& f_;
  RawDockerfile raw_;
  Vars global_, args_, env_;
  std::shared_ptr<const Vars> merged_, global_shared_;
  std::vector<Vars> end_env_;   // ENV at the end of each finished stage
  std::vector<Vars> end_args_;  // ARG values at the end of each finished stage
  bool posix_shell_ = true;     // the stage's SHELL is sh-like (the default /bin/sh -c)
  std::vector<bool> end_shell_;
};

}  // namespace

Dockerfile parse_dockerfile(const SourceFile& f) {
  return Builder(f, read_lines(f)).build();
}

}  // namespace trainimg::recipes
