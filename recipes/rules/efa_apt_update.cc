// SPDX-License-Identifier: GPL-3.0-or-later
// efa-apt-update: the installer apt-installs third-party dependencies, so the
// package lists must be fetched earlier in the SAME RUN (a separate RUN may
// come from a cached layer with empty lists) and not wiped in between.
#include <cctype>

#include "recipes/rules/rules.h"

namespace trainimg::recipes::rules {
namespace {

// `apt-get -qq update` -> "update".
std::string apt_subcommand(const std::vector<const Word*>& argv) {
  if (argv.empty()) return {};
  std::string p = base_name(argv[0]->text);
  if (p != "apt-get" && p != "apt") return {};
  for (size_t i = 1; i < argv.size(); ++i) {
    const std::string& w = argv[i]->text;
    if (w == "-o" || w == "-c")
      ++i;
    else if (w.empty() || w[0] != '-')
      return w;
  }
  return {};
}

bool wipes_lists(const std::vector<const Word*>& argv) {
  if (argv.empty() || base_name(argv[0]->text) != "rm") return false;
  for (size_t i = 1; i < argv.size(); ++i) {
    std::string w = argv[i]->text;
    if (!w.empty() && w[0] == '-') continue;
    if (w.size() >= 2 && w.compare(w.size() - 2, 2, "/*") == 0) w.resize(w.size() - 2);
    if (path_under(w, "/var/lib/apt/lists") || path_under("/var/lib/apt/lists", w)) return true;
  }
  return false;
}

// Whether the image's packages come from RPM (Amazon Linux, RHEL family,
// SUSE): the installer then uses yum/dnf/zypper, which fetch their metadata
// themselves, and seed 002's "apt package list is empty" cannot happen.
// Known from the root image's name (`nvidia/cuda:…-amzn2023`,
// `amazonlinux:2023`, `rockylinux:9`, `…/ubi9/ubi`) or, when that says
// nothing, from RUNs that use an RPM package manager and never apt.
bool rpm_based(const Context& c) {
  std::string img = c.df.root_image(c.df.final_stage());
  for (auto& ch : img) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  static const char* kRpm[] = {"amzn", "amazonlinux", "centos",      "rockylinux", "almalinux", "fedora",
                               "ubi",  "rhel",        "oraclelinux", "opensuse",   "sles"};
  size_t b = 0;
  while (b < img.size()) {
    size_t e = img.find_first_of("/:@-._", b);
    if (e == std::string::npos) e = img.size();
    std::string tok = img.substr(b, e - b);
    while (!tok.empty() && std::isdigit(static_cast<unsigned char>(tok.back()))) tok.pop_back();
    for (const char* r : kRpm)
      if (tok == r) return true;
    b = e + 1;
  }
  bool rpm = false;
  for (const Instruction* in : c.final_image)
    for (const auto& cmd : in->script.commands) {
      auto argv = effective_argv(cmd);
      if (argv.empty()) continue;
      std::string p = base_name(argv[0]->text);
      if (p == "apt-get" || p == "apt" || p == "dpkg") return false;
      if (p == "yum" || p == "dnf" || p == "microdnf" || p == "tdnf" || p == "zypper") rpm = true;
    }
  return rpm;
}

const RuleInfo& info() {
  return efa_apt_update().info;
}

void check(const Context& c) {
  auto runs = installer_runs(c);
  if (runs.empty() || rpm_based(c)) return;
  for (const InstallerRun& r : runs) {
    const auto& cmds = r.run->script.commands;
    int update = -1, wipe = -1;
    for (size_t k = 0; k < r.command; ++k) {
      auto argv = effective_argv(cmds[k]);
      if (apt_subcommand(argv) == "update") {
        update = static_cast<int>(k);
        wipe = -1;
      } else if (update >= 0 && wipes_lists(argv)) {
        wipe = static_cast<int>(k);
      }
    }
    if (update < 0) {
      std::string where;
      for (const Instruction* in : c.final_image) {
        if (in == r.run) break;
        for (const auto& cmd : in->script.commands) {
          auto argv = effective_argv(cmd);
          if (apt_subcommand(argv) == "update")  // name it as written: `apt update` or `apt-get update`
            where = " (the " + base_name(argv[0]->text) + " update on line " +
                    std::to_string(c.src.line_col(cmd.span.offset).line) +
                    " is in another RUN, another layer)";
        }
      }
      c.add(Finding(info(), "efa_installer.sh runs without apt-get update earlier in the same RUN" + where)
                .at(c.src, r.argv[0]->span));
    } else if (wipe >= 0) {
      c.add(Finding(info(), "the apt lists are removed between apt-get update and efa_installer.sh")
                .at(c.src, cmds[static_cast<size_t>(wipe)].span));
    }
  }
}

}  // namespace

const Rule& efa_apt_update() {
  static const Rule r{
      {"efa-apt-update", Severity::Error,
       "a `RUN` runs `efa_installer.sh` without `apt-get update` earlier in the same `RUN`, or removes "
       "`/var/lib/apt/lists` between them; not on an RPM image (Amazon Linux, RHEL family, SUSE), whose "
       "yum/dnf/zypper fetch their own metadata",
       "run `apt-get update && … && ./efa_installer.sh …` in ONE RUN; clean /var/lib/apt/lists only "
       "after the installer",
       "seed 002, Pitfall 1: run apt-get update first within the same RUN", "dockerfile",
       "docs/lint.md#rules"},
      check};
  return r;
}

}  // namespace trainimg::recipes::rules
