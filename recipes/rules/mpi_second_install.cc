// SPDX-License-Identifier: GPL-3.0-or-later
// mpi-second-install: NGC ships Open MPI 5 in /usr/local/mpi; a second Open
// MPI (apt, a source build) or building/running against the installer's
// /opt/amazon/openmpi mixes the two (opal_shmem_base_select failed ->
// MPI_INIT failed).
#include <array>

#include "recipes/rules/rules.h"

namespace trainimg::recipes::rules {
namespace {

constexpr std::array<std::string_view, 9> kPackages = {"openmpi-bin",   "libopenmpi-dev", "openmpi-common",
                                                       "libopenmpi3",   "libopenmpi3t64", "libopenmpi40",
                                                       "openmpi",       "openmpi-devel",  "openmpi5"};
constexpr std::array<std::string_view, 2> kInstallerMpi = {"/opt/amazon/openmpi", "/opt/amazon/openmpi5"};
constexpr std::array<std::string_view, 5> kMpiVars = {"MPI_HOME", "OPAL_PREFIX", "MPI_ROOT", "MPI_DIR", "OMPI_DIR"};

bool installer_mpi(const std::string& path) {
  for (auto p : kInstallerMpi)
    if (path_under(path, std::string(p))) return true;
  return false;
}

// A variable assignment that points at the installer's Open MPI.
bool points_at_installer_mpi(const std::string& key, const std::string& value) {
  if (key == "PATH" || key == "LD_LIBRARY_PATH" || key == "LIBRARY_PATH" || key == "CPATH") {
    for (const auto& d : split_path_list(value))
      if (installer_mpi(d)) return true;
    return false;
  }
  for (auto v : kMpiVars)
    if (key == v) return installer_mpi(value);
  return false;
}

// "openmpi-4.1.6.tar.bz2" / ".../open-mpi/ompi.git": a source build.
bool openmpi_source(const std::string& word) {
  std::string b = base_name(word.substr(0, word.find_first_of("?#")));
  if (b.rfind("openmpi-", 0) == 0) {
    for (std::string_view ext : {".tar.gz", ".tar.bz2", ".tar.xz", ".tgz"})
      if (b.size() > ext.size() && b.compare(b.size() - ext.size(), ext.size(), ext) == 0) return true;
  }
  return (b == "ompi" || b == "ompi.git") && base_name(word.substr(0, word.size() - b.size() - 1)) == "open-mpi";
}

void check_run(const Context& c, const Instruction& in) {
  const RuleInfo& info = mpi_second_install().info;
  for (const Command& cmd : in.script.commands) {
    for (const auto& [pkg, w] : installed_packages(cmd))
      for (auto p : kPackages)
        if (pkg == p) c.report(info, Severity::Error, w->span, "installs another Open MPI (" + pkg + ") on the NGC base");
    for (const Word& a : cmd.assignments) {
      size_t eq = a.text.find('=');
      if (points_at_installer_mpi(a.text.substr(0, eq), a.text.substr(eq + 1)))
        c.report(info, Severity::Error, a.span, "points " + a.text.substr(0, eq) + " at the installer's Open MPI");
    }
    auto argv = effective_argv(cmd);
    if (argv.empty()) continue;
    if (installer_mpi(argv[0]->text)) {
      c.report(info, Severity::Error, argv[0]->span, "runs " + argv[0]->text + " from the installer's Open MPI");
      continue;
    }
    bool is_export = base_name(argv[0]->text) == "export";
    for (size_t i = 1; i < argv.size(); ++i) {
      const std::string& w = argv[i]->text;
      if (openmpi_source(w)) {
        c.report(info, Severity::Error, argv[i]->span, "builds another Open MPI from source (" + base_name(w) + ")");
        continue;
      }
      size_t eq = w.find('=');
      if (eq == std::string::npos) continue;
      std::string key = w.substr(0, eq), value = w.substr(eq + 1);
      // `--with-mpi=/opt/amazon/openmpi`, `-DMPI_HOME=…`, `export PATH=…`.
      if ((is_export && points_at_installer_mpi(key, value)) || (!is_export && installer_mpi(value)))
        c.report(info, Severity::Error, argv[i]->span, "builds against the installer's Open MPI (" + w + ")");
    }
  }
}

void check(const Context& c) {
  if (!c.ngc_base) return;
  for (const Instruction* in : c.final_image) {
    if (in->keyword == "RUN") check_run(c, *in);
    if (in->keyword != "ENV") continue;
    for (const KeyValue& kv : in->pairs)
      if (points_at_installer_mpi(kv.key, kv.value))
        c.report(mpi_second_install().info, Severity::Error, kv.value_span,
                 kv.key + " points at the installer's Open MPI (/opt/amazon/openmpi*) on an NGC base");
  }
}

}  // namespace

const Rule& mpi_second_install() {
  static const Rule r{{"mpi-second-install", Severity::Error,
                       "on an NGC base: installs another Open MPI (apt openmpi-bin/libopenmpi-dev, a source build) or "
                       "builds/runs against /opt/amazon/openmpi (PATH, MPI_HOME, OPAL_PREFIX, mpicc)",
                       "leave NGC's Open MPI (/usr/local/mpi) as the only MPI; verify communication with a "
                       "PyTorch-based measurement instead of MPI programs",
                       "seed 002, Pitfall 4: do not layer another MPI on top of NGC Open MPI", "dockerfile"},
                      check};
  return r;
}

}  // namespace trainimg::recipes::rules
