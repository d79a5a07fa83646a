// SPDX-License-Identifier: GPL-3.0-or-later
// What a Dockerfile lint rule sees (Context) and what it is (Rule), plus the
// structural helpers several rules share: effective argv of a command, the
// efa_installer.sh runs and their getopt-parsed flags, path lists.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/diagnostic.h"
#include "common/source_file.h"
#include "recipes/dockerfile/dockerfile.h"
#include "recipes/recipes.h"

namespace trainimg::recipes::rules {

struct Context {
  const Dockerfile& df;
  const SourceFile& src;
  const LintOptions& opt;
  /// Instructions of the stages that end in the final image, in build order
  /// (the root of the FROM chain first).
  std::vector<const Instruction*> final_image;
  /// The final image is built on an NGC framework image (see NgcBase).
  bool ngc_base = false;
  std::vector<Diagnostic>* out = nullptr;
  /// What the root image of the final stage is (NGC family, where its MPI is).
  NgcBase base;

  /// Adds a finding (built with Finding, positioned in `src`).
  void add(Diagnostic d) const { out->push_back(std::move(d)); }
};

struct Rule {
  RuleInfo info;
  void (*check)(const Context&);
};

/// Every rule, in catalogue order (rules/all_rules.cc).
const std::vector<const Rule*>& all_rules();

/// argv with wrappers removed: `sudo -E`, `env A=1`, `exec`, `command`,
/// `nice -n 5`, `nohup`, `time`, and `sh ./script.sh args` (the script and
/// its args). Empty when the command runs nothing.
std::vector<const Word*> effective_argv(const Command& c);
/// Base name of a path word ("./efa_installer.sh" -> "efa_installer.sh").
std::string base_name(const std::string& path);

/// One run of efa_installer.sh in a RUN of the final image.
struct InstallerRun {
  const Instruction* run = nullptr;
  size_t command = 0;             ///< index in run->script.commands
  std::vector<const Word*> argv;  ///< effective argv; argv[0] is the installer
  /// Long option name -> the word that set it, getopt-parsed as the installer
  /// does (short clusters -ykln, unique long prefixes, --opt=value, `--`).
  std::map<std::string, const Word*> options;
};
std::vector<InstallerRun> installer_runs(const Context& c);

/// "https://…/aws-efa-installer-1.50.0.tar.gz?x" -> "1.50.0" ("latest", or a
/// text with an unresolved ${VAR}, as written); nullopt for another word.
std::optional<std::string> installer_tarball_version(const std::string& word);
/// The installer version the final image downloads, when it is a version.
std::optional<std::string> installer_version(const Context& c);

/// Whether the final image shows EFA: the installer runs, or a RUN/ENV names
/// /opt/amazon/efa, the aws-ofi-nccl plugin, FI_PROVIDER=efa, or the base is
/// an AWS Deep Learning Container (which carries the EFA stack).
bool shows_efa(const Context& c);

/// Whether the final image shows a GPU stack: a CUDA, NGC or AWS Deep
/// Learning Container base; CUDA, cuDNN or NCCL packages; a RUN/ENV naming
/// NCCL (nccl-tests, aws-ofi-nccl, NCCL_*) or CUDA (`/usr/local/cuda`,
/// `--with-cuda`, CUDA_*). The installer's own command line does not count.
bool shows_gpu_stack(const Context& c);

/// A directory the Dockerfile itself fills with a libfabric or an NCCL net
/// plugin (a source build's install prefix, a copy of the library): another
/// copy beside the installer's (rules/own_copies.cc).
struct OwnCopy {
  enum class Kind { Libfabric, NetPlugin };
  Kind kind;
  std::string dir;  ///< without a trailing slash: "/usr/local/lib"
  Span at;          ///< the configure, cp or COPY that put it there
};
std::vector<OwnCopy> own_copies(const Context& c);

/// Index in c.final_image of an instruction, or -1.
int final_index(const Context& c, const Instruction* in);

/// `a:b::c` -> {"a", "b", "", "c"}. Parameter expansions read as where the
/// variable is set (an inherited list is): `/a${V:+:${V}}` -> {"/a", "${V}"},
/// `${V:-/x}` -> {"${V}"}; a colon inside `${…}` does not split.
std::vector<std::string> split_path_list(const std::string& v);
/// The word of an `rm` in RUN `in` that removes `path` (names it, a directory
/// above it, or such a directory's `/*`); null if none.
const Word* rm_of(const Instruction& in, const std::string& path);
/// `path` is `dir` or below it (component-wise; trailing slashes ignored).
bool path_under(std::string path, std::string dir);

/// apt-get/apt/yum/dnf install: the package names (versions and archs cut),
/// with the word each came from. Empty for any other command.
std::vector<std::pair<std::string, const Word*>> installed_packages(const Command& c);

}  // namespace trainimg::recipes::rules
