// SPDX-License-Identifier: GPL-3.0-or-later
// The directories a Dockerfile itself fills with a libfabric or an NCCL net
// plugin, besides the installer's: a libfabric or aws-ofi-nccl source build
// (`./configure --prefix=DIR` or cmake's CMAKE_INSTALL_PREFIX, then `make
// install`: DIR/lib, DIR/lib64; /usr/local without a prefix, as autotools
// and cmake default), or `COPY`/`cp`/`mv`/`install` of `libfabric.so*` /
// `libnccl-net*.so*` into a directory. Seed 002, Pitfall 3 wants the
// installer's copies found first; these are the other copies.
#include <algorithm>
#include <cctype>

#include "recipes/rules/rule.h"

namespace trainimg::recipes::rules {
namespace {

using Kind = OwnCopy::Kind;

std::string lowered(std::string s) {
  for (auto& ch : s) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return s;
}

// The project a source directory, a clone URL or a configure path names.
std::optional<Kind> project_of(const std::string& text) {
  std::string t = lowered(text);
  if (t.find("libfabric") != std::string::npos) return Kind::Libfabric;
  if (t.find("ofi-nccl") != std::string::npos || t.find("nccl-net") != std::string::npos)
    return Kind::NetPlugin;
  return std::nullopt;
}

// A library file name: libfabric.so, libfabric.so.1*, libnccl-net*.so*.
std::optional<Kind> library_of(const std::string& path) {
  std::string b = base_name(path);
  if (b.rfind("libfabric.so", 0) == 0) return Kind::Libfabric;
  if (b.rfind("libnccl-net", 0) == 0 && b.find(".so") != std::string::npos) return Kind::NetPlugin;
  return std::nullopt;
}

std::string trim_slashes(std::string d) {
  while (d.size() > 1 && d.back() == '/') d.pop_back();
  return d;
}

std::string dir_name(const std::string& path) {
  size_t s = path.rfind('/');
  return s == std::string::npos || s == 0 ? "/" : path.substr(0, s);
}

// `cp a b DIR`, `cp -t DIR a b`, `COPY a b DIR/`: where library sources land.
void copies(const std::vector<const Word*>& args, const Span& at, std::vector<OwnCopy>& out) {
  std::vector<const Word*> files;
  std::string target;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& w = args[i]->text;
    if (w == "-t" && i + 1 < args.size()) {
      target = args[++i]->text;
    } else if (w.rfind("--target-directory=", 0) == 0) {
      target = w.substr(19);
    } else if (w.size() > 1 && w[0] == '-') {
      continue;
    } else {
      files.push_back(args[i]);
    }
  }
  if (target.empty()) {
    if (files.size() < 2) return;
    target = files.back()->text;
    files.pop_back();
    // `cp libfabric.so.1.2 /usr/lib/libfabric.so.1`: the target is a file.
    if (files.size() == 1 && library_of(target) && target.back() != '/') target = dir_name(target);
  }
  for (const Word* f : files)
    if (auto k = library_of(f->text)) out.push_back({*k, trim_slashes(target), at});
}

void prefix_install(Kind k, const std::string& prefix, const Span& at, std::vector<OwnCopy>& out) {
  std::string p = trim_slashes(prefix);
  for (const char* lib : {"/lib", "/lib64"}) out.push_back({k, (p == "/" ? "" : p) + lib, at});
}

void scan_run(const Instruction& in, std::vector<OwnCopy>& out) {
  std::optional<Kind> project;         // the source tree the script is in (`cd`)
  std::map<std::string, Kind> clones;  // `git clone URL DIR`: DIR -> what URL names
  std::map<Kind, std::string> prefix;  // configured, not installed yet
  std::map<Kind, Span> configured_at;
  for (const Command& cmd : in.script.commands) {
    auto argv = effective_argv(cmd);
    if (argv.empty()) continue;
    std::string p = base_name(argv[0]->text);
    if (p == "git" && argv.size() > 2 && argv[1]->text == "clone") {
      std::vector<std::string> words;
      for (size_t i = 2; i < argv.size(); ++i) {
        const std::string& w = argv[i]->text;
        if (w == "-b" || w == "--branch" || w == "--depth" || w == "-o" || w == "--origin" || w == "-c" ||
            w == "--config" || w == "--reference" || w == "-j" || w == "--jobs")
          ++i;  // its value
        else if (w.rfind("-", 0) != 0)
          words.push_back(w);
      }
      if (words.empty()) continue;
      std::string dir = words.size() > 1 ? words[1] : base_name(trim_slashes(words[0]));
      if (dir.size() > 4 && dir.compare(dir.size() - 4, 4, ".git") == 0) dir.resize(dir.size() - 4);
      if (auto k = project_of(words[0])) clones[trim_slashes(dir)] = *k;
      continue;
    }
    if (p == "cd" || p == "pushd") {
      std::string to = argv.size() > 1 ? trim_slashes(argv[1]->text) : "";
      auto cloned = clones.find(to);
      if (cloned != clones.end())
        project = cloned->second;
      else if (auto k = project_of(to))
        project = k;
      else if (to.empty() || to[0] == '/' || to[0] == '~')
        project.reset();  // left the source tree; `cd build` stays in it
      continue;
    }
    std::optional<Kind> here = project_of(argv[0]->text);
    if (!here) here = project;
    if (p == "configure" || p == "cmake") {
      if (!here) continue;
      std::string pre = "/usr/local";
      for (size_t i = 1; i < argv.size(); ++i) {
        const std::string& w = argv[i]->text;
        if (w.rfind("--prefix=", 0) == 0) pre = w.substr(9);
        if (w == "--prefix" && i + 1 < argv.size()) pre = argv[i + 1]->text;
        if (w.rfind("-DCMAKE_INSTALL_PREFIX=", 0) == 0) pre = w.substr(23);
        if (w.rfind("-DCMAKE_INSTALL_PREFIX:PATH=", 0) == 0) pre = w.substr(28);
      }
      std::string mode = p == "cmake" && argv.size() > 1 ? argv[1]->text : "";
      if (mode == "--install" || mode == "--build") {
        bool install = mode == "--install" || std::any_of(argv.begin() + 2, argv.end(),
                                                          [](const Word* w) { return w->text == "install"; });
        if (install && prefix.count(*here)) prefix_install(*here, prefix[*here], configured_at[*here], out);
        continue;
      }
      prefix[*here] = pre;
      configured_at[*here] = argv[0]->span;
      continue;
    }
    if (p == "make" || p == "ninja") {
      bool install = std::any_of(argv.begin() + 1, argv.end(), [](const Word* w) {
        return w->text == "install" || w->text.rfind("install-", 0) == 0;
      });
      if (!install || !here || !prefix.count(*here)) continue;
      std::string pre = prefix[*here];
      for (size_t i = 1; i < argv.size(); ++i)
        if (argv[i]->text.rfind("prefix=", 0) == 0 || argv[i]->text.rfind("PREFIX=", 0) == 0)
          pre = argv[i]->text.substr(7);
      prefix_install(*here, pre, configured_at[*here], out);
      continue;
    }
    if (p == "cp" || p == "mv" || p == "install") copies({argv.begin() + 1, argv.end()}, argv[0]->span, out);
  }
}

}  // namespace

std::vector<OwnCopy> own_copies(const Context& c) {
  std::vector<OwnCopy> out;
  for (const Instruction* in : c.final_image) {
    if (in->keyword == "RUN") scan_run(*in, out);
    if (in->keyword == "COPY" || in->keyword == "ADD") {
      std::vector<const Word*> args;
      for (const Word& w : in->args) args.push_back(&w);
      copies(args, in->span, out);
    }
  }
  return out;
}

}  // namespace trainimg::recipes::rules
