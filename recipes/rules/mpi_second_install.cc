// SPDX-License-Identifier: GPL-3.0-or-later
// mpi-second-install: the NGC PyTorch container (and the framework images
// built on it) ships Open MPI in /usr/local/mpi, HPC images HPC-X's under
// /opt/hpcx; a second Open MPI (apt, a source build) or building/running
// against the installer's /opt/amazon/openmpi mixes the two
// (opal_shmem_base_select failed -> MPI_INIT failed). One finding per root
// cause: every line of one other Open MPI (download, unpack, build, rm; PATH,
// OPAL_PREFIX, ld.so.conf.d, --with-mpi=) is a related location of it. When
// the base's Open MPI is deleted first (the "replace" pattern) it is one
// finding at the deletion.
#include <algorithm>
#include <array>
#include <map>

#include "recipes/rules/rules.h"

namespace trainimg::recipes::rules {
namespace {

// Open MPI's own packages (Debian/Ubuntu and RPM names), and Debian's
// default-MPI metapackages, which pull Open MPI in on Debian and Ubuntu.
constexpr std::array<std::string_view, 11> kPackages = {
    "openmpi-bin", "libopenmpi-dev", "openmpi-common", "libopenmpi3",     "libopenmpi3t64", "libopenmpi40",
    "openmpi",     "openmpi-devel",  "openmpi5",       "mpi-default-bin", "mpi-default-dev"};
constexpr std::array<std::string_view, 2> kInstallerMpi = {"/opt/amazon/openmpi", "/opt/amazon/openmpi5"};
constexpr std::array<std::string_view, 5> kMpiVars = {"MPI_HOME", "OPAL_PREFIX", "MPI_ROOT", "MPI_DIR",
                                                      "OMPI_DIR"};

bool installer_mpi(const std::string& path) {
  for (auto p : kInstallerMpi)
    if (path_under(path, std::string(p))) return true;
  return false;
}

// A variable assignment that points at the installer's Open MPI.
bool points_at_installer_mpi(const std::string& key, const std::string& value) {
  if (key == "PATH" || key == "LD_LIBRARY_PATH" || key == "LIBRARY_PATH" || key == "CPATH" ||
      key == "CMAKE_PREFIX_PATH" || key == "PKG_CONFIG_PATH") {
    for (const auto& d : split_path_list(value))
      if (installer_mpi(d)) return true;
    return false;
  }
  for (auto v : kMpiVars)
    if (key == v) return installer_mpi(value);
  return false;
}

// "openmpi-4.1.6.tar.bz2" -> "openmpi-4.1.6"; ".../open-mpi/ompi.git" -> "ompi.git"; "" otherwise.
std::string openmpi_source(const std::string& word) {
  std::string b = base_name(word.substr(0, word.find_first_of("?#")));
  if (b.rfind("openmpi-", 0) == 0) {
    for (std::string_view ext : {".tar.gz", ".tar.bz2", ".tar.xz", ".tgz"})
      if (b.size() > ext.size() && b.compare(b.size() - ext.size(), ext.size(), ext) == 0)
        return b.substr(0, b.size() - ext.size());
  }
  if ((b == "ompi" || b == "ompi.git") && word.size() > b.size() &&
      base_name(word.substr(0, word.size() - b.size() - 1)) == "open-mpi")
    return "ompi.git";
  return {};
}

// One other Open MPI and every place that brings it in or uses it.
struct Cause {
  std::string key;    // "installer", "apt", "source:openmpi-4.1.6"
  std::string title;  // "the installer's Open MPI (/opt/amazon/openmpi)"
  std::vector<std::pair<Span, std::string>> places;
};

class Collector {
 public:
  void add(const std::string& key, const std::string& title, Span at, std::string what) {
    auto it = std::find_if(causes_.begin(), causes_.end(), [&](const Cause& c) { return c.key == key; });
    if (it == causes_.end()) {
      causes_.push_back({key, title, {}});
      it = causes_.end() - 1;
    }
    for (const auto& p : it->places)
      if (p.first.offset == at.offset) return;
    it->places.emplace_back(at, std::move(what));
  }
  std::vector<Cause>& causes() { return causes_; }

 private:
  std::vector<Cause> causes_;
};

const std::string kInstallerTitle = "the installer's Open MPI (/opt/amazon/openmpi*)";

void installer(Collector& col, Span at, std::string what) {
  col.add("installer", kInstallerTitle, at, std::move(what));
}

void collect_run(Collector& col, const Instruction& in) {
  for (const Command& cmd : in.script.commands) {
    for (const auto& [pkg, w] : installed_packages(cmd))
      for (auto p : kPackages)
        if (pkg == p) col.add("apt", "a distribution Open MPI package", w->span, "installs " + pkg);
    for (const Word& a : cmd.assignments) {
      size_t eq = a.text.find('=');
      if (points_at_installer_mpi(a.text.substr(0, eq), a.text.substr(eq + 1)))
        installer(col, a.span, "points " + a.text.substr(0, eq) + " at it");
    }
    auto argv = effective_argv(cmd);
    if (argv.empty()) continue;
    if (installer_mpi(argv[0]->text)) {
      installer(col, argv[0]->span, "runs " + base_name(argv[0]->text) + " from it");
      continue;
    }
    std::string prog = base_name(argv[0]->text);
    bool is_export = prog == "export";
    // `echo /opt/amazon/openmpi/lib > /etc/ld.so.conf.d/x.conf`: the loader finds it.
    bool to_ld_conf = std::any_of(cmd.redirects.begin(), cmd.redirects.end(), [](const Word& w) {
      return path_under(w.text, "/etc/ld.so.conf.d") || w.text == "/etc/ld.so.conf";
    });
    for (size_t i = 1; i < argv.size(); ++i) {
      const std::string& w = argv[i]->text;
      if (std::string src = openmpi_source(w); !src.empty()) {
        col.add("source:" + src, "another Open MPI built from source (" + src + ")", argv[i]->span,
                prog + " " + base_name(w));
        continue;
      }
      if (to_ld_conf && (prog == "echo" || prog == "printf") && installer_mpi(w)) {
        installer(col, argv[i]->span, "registers " + w + " in " + cmd.redirects.front().text);
        continue;
      }
      size_t eq = w.find('=');
      if (eq == std::string::npos) continue;
      std::string key = w.substr(0, eq), value = w.substr(eq + 1);
      // `--with-mpi=/opt/amazon/openmpi`, `-DMPI_HOME=…`, `export PATH=…`.
      if ((is_export && points_at_installer_mpi(key, value)) || (!is_export && installer_mpi(value)))
        installer(col, argv[i]->span, (is_export ? "exports " : "builds with ") + w);
    }
  }
}

// `rm -rf /usr/local/mpi` (or a directory above the base's Open MPI).
std::string ordinal_list(size_t n) {
  return n == 1 ? "1 place" : std::to_string(n) + " places";
}

void check(const Context& c) {
  const RuleInfo& info = mpi_second_install().info;
  if (c.base.mpi == NgcMpi::None) return;
  const std::string base_mpi = c.base.mpi_prefix();
  Collector col;
  const Word* removal = nullptr;
  std::map<std::string, std::string> earlier;  // ENV key -> the value the last ENV gave it
  for (const Instruction* in : c.final_image) {
    if (in->keyword == "RUN") {
      collect_run(col, *in);
      if (!removal) removal = rm_of(*in, base_mpi);
      // Older NGC PyTorch releases keep Open MPI in HPC-X as well.
      if (!removal && c.base.mpi == NgcMpi::UsrLocalMpi) removal = rm_of(*in, "/opt/hpcx/ompi");
    }
    if (in->keyword != "ENV") continue;
    for (const KeyValue& kv : in->pairs) {
      // What this ENV adds: the value an earlier ENV gave the variable, carried
      // by its own reference (`ENV PATH=/opt/gdrcopy/bin:$PATH`), is that ENV's place.
      std::string added = kv.value;
      auto p = earlier.find(kv.key);
      if (p != earlier.end() && !p->second.empty()) {
        auto refs = referenced_vars(kv.raw_value);
        size_t at = added.find(p->second);
        if (at != std::string::npos && std::find(refs.begin(), refs.end(), kv.key) != refs.end())
          added.erase(at, p->second.size());
      }
      if (points_at_installer_mpi(kv.key, added))
        installer(col, kv.value_span, "ENV " + kv.key + " points at it");
      earlier[kv.key] = kv.value;
    }
  }
  auto& causes = col.causes();
  if (causes.empty()) return;
  for (auto& cause : causes)
    std::sort(cause.places.begin(), cause.places.end(),
              [](const auto& a, const auto& b) { return a.first.offset < b.first.offset; });
  if (removal) {
    std::string titles;
    for (const auto& cause : causes)
      titles += (titles.empty() ? "" : "; ") + cause.title + ", " + ordinal_list(cause.places.size());
    Finding f =
        Finding(info, "replaces the base's Open MPI (" + base_mpi +
                          ", removed here) with another: " + titles +
                          ". The seed leaves NGC's MPI as-is: keep it, or make sure nothing of the base "
                          "still expects the removed one")
            .severity(Severity::Warning)
            .at(c.src, removal->span)
            .hint(
                "keep NGC's Open MPI and drop the other one (verify communication with a PyTorch-based "
                "measurement); if you must replace it, remove every trace of the old one (OPAL_PREFIX, "
                "/etc/ld.so.conf.d/hpcx.conf, PATH)");
    for (const auto& cause : causes)
      for (const auto& [span, why] : cause.places) f.related(c.src, span, why);
    c.add(f);
    return;
  }
  for (const auto& cause : causes) {
    size_t more = cause.places.size() - 1;
    Finding f = Finding(info, cause.title + " beside the base's Open MPI (" + base_mpi +
                                  "): " + cause.places.front().second +
                                  (more == 0 ? "" : " (and " + ordinal_list(more) + " more)"))
                    .at(c.src, cause.places.front().first);
    for (size_t i = 1; i < cause.places.size(); ++i)
      f.related(c.src, cause.places[i].first, cause.places[i].second);
    c.add(f);
  }
}

}  // namespace

const Rule& mpi_second_install() {
  static const Rule r{
      {"mpi-second-install", Severity::Error,
       "on an NGC base with an Open MPI (the PyTorch container and images built on it: `/usr/local/mpi`; HPC "
       "images: `/opt/hpcx`): installs another Open MPI (apt `openmpi-bin`/`libopenmpi-dev`, a source build) "
       "or builds/runs against `/opt/amazon/openmpi` (`PATH`, `MPI_HOME`, `OPAL_PREFIX`, ld.so.conf.d, "
       "`--with-mpi=`, `mpicc`); one finding per other Open MPI (its other places as related locations); a "
       "warning when the base's Open MPI is deleted first",
       "leave NGC's Open MPI (/usr/local/mpi) as the only MPI; verify communication with a "
       "PyTorch-based measurement instead of MPI programs",
       "seed 002, Pitfall 4: do not layer another MPI on top of NGC Open MPI", "dockerfile",
       "docs/lint.md#rules"},
      check};
  return r;
}

}  // namespace trainimg::recipes::rules
