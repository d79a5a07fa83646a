// SPDX-License-Identifier: GPL-3.0-or-later
// efa-ld-library-path: once the installer ran, the FINAL LD_LIBRARY_PATH of
// the image (whichever ENV set it, before or after the installer RUN) must
// list the installer's aws-ofi-nccl and libfabric directories before anything
// that may hold the base's older copies: the inherited ${LD_LIBRARY_PATH},
// another aws-ofi-nccl/libfabric/HPC-X directory, the distribution's library
// directory, a directory the file itself fills with a libfabric or an NCCL
// net plugin (own_copies.cc). The inherited value must be kept (warning). The
// directories demanded are those of the installer version in use; `latest`
// is laid out as the newest installer known.
#include <algorithm>

#include "common/version.h"
#include "recipes/dockerfile/dockerfile.h"
#include "recipes/rules/rules.h"

namespace trainimg::recipes::rules {
namespace {

constexpr const char* kExpected = "/opt/amazon/ofi-nccl/lib:/opt/amazon/efa/lib:${LD_LIBRARY_PATH}";

std::string trimmed(std::string a) {
  while (a.size() > 1 && a.back() == '/') a.pop_back();
  return a;
}

// Where the installer version in use puts aws-ofi-nccl. Public AWS samples
// use /opt/amazon/ofi-nccl/lib/x86_64-linux-gnu (Debian multiarch) with
// installers 1.43.2-1.47.0 and had to build the plugin themselves with older
// installers; seed 002 uses /opt/amazon/ofi-nccl/lib with 1.50.0. Every one of
// these directories is accepted; only the hint follows the version.
struct Layout {
  bool plugin = true;       // the version is known to lay down /opt/amazon/ofi-nccl
  std::string plugin_hint;  // the directory the hint names
  std::string version;      // "" when unknown
};

// The newest installer whose layout is known (seed 002's validated 1.50.0):
// what `aws-efa-installer-latest.tar.gz` is laid out as.
constexpr const char* kNewestKnown = "1.50.0";

// The installer release the final image downloads: a version, or "latest".
std::optional<std::string> release(const Context& c) {
  if (auto v = installer_version(c)) return v;
  for (const Instruction* in : c.final_image)
    for (const auto& cmd : in->script.commands)
      for (const Word& w : cmd.argv)
        if (auto v = installer_tarball_version(w.text); v && *v == "latest") return v;
  return std::nullopt;
}

Layout layout(const std::optional<std::string>& v) {
  Layout l;
  l.plugin_hint = "/opt/amazon/ofi-nccl/lib";
  if (v && *v == "latest") {
    l.version = std::string("latest, laid out as ") + kNewestKnown + ", the newest known";
    return l;
  }
  if (!v) {
    l.plugin = false;  // not known: demand only libfabric's directory
    return l;
  }
  l.version = *v;
  if (compare_versions(*v, "1.43.0") < 0)
    l.plugin = false;
  else if (compare_versions(*v, "1.50.0") < 0)
    l.plugin_hint = "/opt/amazon/ofi-nccl/lib/x86_64-linux-gnu";
  return l;
}

bool plugin_dir(const std::string& d) {
  std::string t = trimmed(d);
  return t == "/opt/amazon/ofi-nccl/lib" || t == "/opt/amazon/ofi-nccl/lib/x86_64-linux-gnu" ||
         t == "/opt/amazon/ofi-nccl/lib/aarch64-linux-gnu";
}
bool efa_dir(const std::string& d) {
  return trimmed(d) == "/opt/amazon/efa/lib" || trimmed(d) == "/opt/amazon/efa/lib64";
}

bool inherited(const std::string& d) {
  return d == "$LD_LIBRARY_PATH" || d == "${LD_LIBRARY_PATH}";
}

// A directory that may hold another libfabric or NCCL net plugin (the base's).
bool may_shadow(const std::string& d) {
  if (inherited(d) || plugin_dir(d) || efa_dir(d)) return inherited(d);
  std::string t = trimmed(d);
  return t.find("ofi-nccl") != std::string::npos || t.find("libfabric") != std::string::npos ||
         t.find("nccl_rdma_sharp_plugin") != std::string::npos || t == "/usr/lib/x86_64-linux-gnu" ||
         t == "/usr/lib/aarch64-linux-gnu" || t == "/lib/x86_64-linux-gnu" || t == "/usr/lib64";
}

// A directory where a distribution libfabric (Ubuntu's libfabric1) or a
// self-built one lives.
bool may_hold_libfabric(const std::string& d) {
  std::string t = trimmed(d);
  return t.find("libfabric") != std::string::npos || t == "/usr/lib/x86_64-linux-gnu" ||
         t == "/usr/lib/aarch64-linux-gnu" || t == "/lib/x86_64-linux-gnu" || t == "/usr/lib64";
}

// The copy the file itself put in a directory, if any (a plugin copy only
// where the installer lays one down too).
const OwnCopy* own_copy(const std::string& d, const std::vector<OwnCopy>& own, const Layout& l) {
  if (plugin_dir(d) || efa_dir(d)) return nullptr;
  for (const OwnCopy& o : own)
    if (o.dir == trimmed(d) && (o.kind == OwnCopy::Kind::Libfabric || l.plugin)) return &o;
  return nullptr;
}

std::string kind_name(const OwnCopy& o) {
  return o.kind == OwnCopy::Kind::Libfabric ? "libfabric" : "NCCL net plugin";
}

std::string what(const OwnCopy& o) {
  return "the " + kind_name(o) + " this file installs into " + o.dir +
         " would be loaded instead of the installer's";
}

struct Verdict {
  Severity sev = Severity::Info;  // Info = fine
  std::string message;
  const OwnCopy* own = nullptr;  // the file's own copy that wins, if that is the fault
};

// `own_stack`: the base carries an EFA stack of its own (an NGC image), whose
// older copies must not win; elsewhere the loader finds the installer's
// libraries through its /etc/ld.so.conf.d entry and only a directory that may
// hold another libfabric/plugin ahead of them is wrong.
Verdict judge(const KeyValue& kv, const Layout& l, bool own_stack, const std::vector<OwnCopy>& own) {
  auto dirs = split_path_list(kv.value);
  size_t shadow = dirs.size();
  for (size_t i = 0; i < dirs.size(); ++i)
    if (may_shadow(dirs[i])) {
      shadow = i;
      break;
    }
  auto find = [&](bool (*is)(const std::string&)) {
    for (size_t i = 0; i < dirs.size(); ++i)
      if (is(dirs[i])) return i;
    return dirs.size();
  };
  size_t efa = find(efa_dir), plugin = find(plugin_dir);
  if (!own_stack) {
    // The installer's directories, where LD_LIBRARY_PATH does not list them,
    // come after it (its /etc/ld.so.conf.d entry).
    for (size_t i = 0; i < dirs.size(); ++i) {
      const OwnCopy* o = own_copy(dirs[i], own, l);
      size_t installer = o && o->kind == OwnCopy::Kind::NetPlugin ? plugin : efa;
      if (o && i < installer)
        return {Severity::Error,
                "the image's final LD_LIBRARY_PATH ('" + kv.value + "') searches " + dirs[i] +
                    " first: " + what(*o),
                o};
      if (!o && may_hold_libfabric(dirs[i]) && i < efa)
        return {
            Severity::Error,
            "the image's final LD_LIBRARY_PATH ('" + kv.value + "') searches " + dirs[i] +
                " before the installer's libfabric: a distribution libfabric there would be loaded first"};
    }
    return {};
  }
  // Name only what is missing: a value that has /opt/amazon/efa/lib but not
  // the plugin directory must not read as if it lacked both.
  std::string missing;
  if (l.plugin && plugin == dirs.size()) missing = l.plugin_hint + " (the installer's aws-ofi-nccl)";
  if (efa == dirs.size())
    missing +=
        (missing.empty() ? "" : " and ") + std::string("/opt/amazon/efa/lib (the installer's libfabric)");
  if (!missing.empty()) {
    // A copy of the file's own in the value is what gets loaded instead.
    const OwnCopy* o = nullptr;
    for (size_t i = 0; i < dirs.size() && !o; ++i) o = own_copy(dirs[i], own, l);
    return {Severity::Error,
            "the image's final LD_LIBRARY_PATH ('" + kv.value + "') does not list " + missing + ": " +
                (o ? what(*o) : "the base's older copies can be loaded"),
            o};
  }
  // The file's own libfabric must come after the installer's libfabric, its
  // own plugin after the installer's plugin.
  for (size_t i = 0; i < dirs.size(); ++i) {
    const OwnCopy* o = own_copy(dirs[i], own, l);
    size_t installer = o && o->kind == OwnCopy::Kind::NetPlugin ? plugin : efa;
    if (o && i < installer)
      return {Severity::Error,
              "the image's final LD_LIBRARY_PATH ('" + kv.value + "') searches " + dirs[i] + " before " +
                  dirs[installer] + ": " + what(*o),
              o};
  }
  size_t last = l.plugin ? std::max(efa, plugin) : efa;
  if (shadow < last)
    return {Severity::Error, "the image's final LD_LIBRARY_PATH ('" + kv.value + "') searches " +
                                 dirs[shadow] + " before " + dirs[last] +
                                 ": the base's older libfabric/aws-ofi-nccl can be loaded first"};
  auto refs = referenced_vars(kv.raw_value);
  if (std::find(refs.begin(), refs.end(), "LD_LIBRARY_PATH") == refs.end() &&
      std::none_of(dirs.begin(), dirs.end(), inherited))
    return {Severity::Warning,
            "the image's final LD_LIBRARY_PATH drops the inherited ${LD_LIBRARY_PATH} of the base image"};
  return {};
}

// The base's EFA stack is gone before the installer runs: an earlier RUN
// removed both /opt/amazon/efa and /opt/amazon/ofi-nccl (`rm -rf /opt/amazon`).
// Its older copies cannot be loaded then.
bool base_stack_removed(const Context& c, const Instruction* installer) {
  bool efa = false, plugin = false;
  for (const Instruction* in : c.final_image) {
    if (in == installer) break;
    if (in->keyword != "RUN") continue;
    efa = efa || rm_of(*in, "/opt/amazon/efa");
    plugin = plugin || rm_of(*in, "/opt/amazon/ofi-nccl");
  }
  return efa && plugin;
}

void check(const Context& c) {
  const RuleInfo& info = efa_ld_library_path().info;
  auto runs = installer_runs(c);
  if (runs.empty()) return;
  // The EFA stack of the base is known for the NGC PyTorch container and its
  // family (seed 002) and the HPC images; another nvcr.io/nvidia image (DCGM,
  // a Kubernetes operator's) is judged as a base without one.
  const bool own_stack = c.ngc_base && c.base.mpi != NgcMpi::None && !base_stack_removed(c, runs.front().run);
  Layout l = layout(release(c));
  auto own = own_copies(c);
  std::string want =
      (l.plugin ? l.plugin_hint + ":" : std::string()) + "/opt/amazon/efa/lib:${LD_LIBRARY_PATH}";
  std::string hint =
      "ENV LD_LIBRARY_PATH=" + want + " (the directories of installer " +
      (l.version.empty()
           ? std::string("version in use; add /opt/amazon/ofi-nccl/lib first where it installs aws-ofi-nccl")
           : l.version) +
      "): the installer's copies first, the base's paths kept";
  // The ENV that decides the final value: the last one whose verdict differs
  // from the one before (an ENV that only prepends keeps its predecessor's).
  const KeyValue* last = nullptr;
  const KeyValue* blamed = nullptr;
  Verdict verdict, prev;
  for (const Instruction* in : c.final_image) {
    if (in->keyword != "ENV") continue;
    for (const KeyValue& kv : in->pairs) {
      if (kv.key != "LD_LIBRARY_PATH") continue;
      verdict = judge(kv, l, own_stack, own);
      if (!blamed || verdict.sev != prev.sev || verdict.sev == Severity::Info) blamed = &kv;
      prev = verdict;
      last = &kv;
    }
  }
  if (!last) {
    if (!own_stack) return;  // the installer's ld.so.conf.d entry finds its libraries
    const InstallerRun& r = runs.back();
    c.add(
        Finding(info,
                "no ENV LD_LIBRARY_PATH in the image with efa_installer.sh: add ENV LD_LIBRARY_PATH=" + want)
            .at(c.src, r.argv[0]->span)
            .hint(hint));
    return;
  }
  if (verdict.sev == Severity::Info) return;
  Span at = blamed->value_span.length ? blamed->value_span : blamed->key_span;
  Finding f = Finding(info, verdict.message).severity(verdict.sev).at(c.src, at).hint(hint);
  if (blamed != last)
    f.related(c.src, last->value_span.length ? last->value_span : last->key_span,
              "the last ENV LD_LIBRARY_PATH, which keeps this value");
  if (verdict.own)
    f.related(c.src, verdict.own->at,
              "installs its own " + kind_name(*verdict.own) + " into " + verdict.own->dir);
  c.add(f);
}

}  // namespace

const Rule& efa_ld_library_path() {
  static const Rule r{
      {"efa-ld-library-path", Severity::Error,
       "with the installer, the image's final `LD_LIBRARY_PATH` (wherever the `ENV` sits) "
       "does not list the installer's aws-ofi-nccl and libfabric directories (those of the "
       "installer version in use; `latest`: the newest known) before the inherited "
       "`${LD_LIBRARY_PATH}`, any other libfabric/plugin directory and any directory the file "
       "fills with its own libfabric or NCCL net plugin; warning when it drops the inherited "
       "`${LD_LIBRARY_PATH}`",
       std::string("ENV LD_LIBRARY_PATH=") + kExpected, "seed 002, Pitfall 3: LD_LIBRARY_PATH", "dockerfile",
       "docs/lint.md#rules"},
      check};
  return r;
}

}  // namespace trainimg::recipes::rules
