// SPDX-License-Identifier: GPL-3.0-or-later
// recipe-efa-flags: `efa.flags` are appended to the container flags the
// renderer always passes (-y -g --skip-kmod --skip-limit-conf --no-verify).
// Each must be a real installer option (by its own spelling, domain.md §3)
// that does not undo a container install (seed 002, Pitfall ②: "Inside a
// container there is neither a kernel nor the actual EFA devices"); a
// container flag given again is dropped by the renderer, so only the YAML
// shows it. --disable-ngc on an NGC base is efa-disable-ngc, found on the
// rendered installer line.
#include "recipes/recipe/checks/checks.h"
#include "recipes/recipe/installer_flags.h"

namespace trainimg::recipes {

namespace {

void check(const RuleInfo& info, const Recipe& r, Findings& out) {
  for (const auto& f : r.efa_flags) {
    std::string value;
    const InstallerFlag* known = find_installer_flag(f.value, &value);
    if (!known) {
      out.push_back(Finding(info, "'" + f.value + "' is not an efa_installer.sh option")
                        .hint("use the installer's own spelling, e.g. --skip-mpi or --mpi=openmpi5")
                        .at_node(f.where, f.length));
    } else if (known->defeats_container) {
      out.push_back(Finding(info, "'" + f.value + "' contradicts a container install of the EFA stack")
                        .hint("remove it; the renderer already passes " + std::string(kContainerFlags))
                        .at_node(f.where, f.length));
    } else if (known->container_set) {
      out.push_back(Finding(info, "'" + f.value + "' is already in the container flags; it is not repeated")
                        .severity(Severity::Warning)
                        .hint("remove it from efa.flags")
                        .at_node(f.where, f.length));
    } else if (known->long_name == "--mpi" && value != "openmpi4" && value != "openmpi5") {
      out.push_back(Finding(info, "--mpi takes openmpi4 or openmpi5, not '" + value + "'")
                        .hint("e.g. --mpi=openmpi5")
                        .at_node(f.where, f.length));
    }
  }
}

}  // namespace

const RecipeCheck& recipe_efa_flags() {
  static const RecipeCheck c{
      {"recipe-efa-flags", Severity::Error,
       "an `efa.flags` entry is not an `efa_installer.sh` option (by its own spelling), undoes a container "
       "install (`-u`/`--uninstall`, `-m`/`--minimal`, `-h`/`--help`), or is `--mpi=` other than "
       "`openmpi4`/`openmpi5`; warning for a container flag (`-y -g --skip-kmod --skip-limit-conf "
       "--no-verify`, any spelling) repeated in `efa.flags`, which the renderer always passes and drops",
       "list in efa.flags only installer options beyond the container set, e.g. --skip-mpi or --mpi=openmpi5",
       "seed 002, Pitfall 2: container-specific EFA installer flags", "recipe",
       "docs/recipes.md#recipe-efa-flags"},
      check};
  return c;
}

}  // namespace trainimg::recipes
