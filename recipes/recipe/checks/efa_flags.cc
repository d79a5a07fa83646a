// SPDX-License-Identifier: GPL-3.0-or-later
// efa-container-flags and efa-disable-ngc for `efa.flags`: the renderer
// always passes -y -g --skip-kmod --skip-limit-conf --no-verify; extra flags
// must be real installer options that do not undo a container install
// (domain.md §3). --disable-ngc is not needed on an NGC base (seed 002,
// Pitfall ②).
#include "recipes/recipe/checks/checks.h"
#include "recipes/recipe/installer_flags.h"
#include "recipes/recipe/load.h"
#include "recipes/rules/rules.h"

namespace trainimg::recipes {

void check_installer_flags(const Recipe& r, Findings& out) {
  for (const auto& f : r.efa_flags) {
    std::string value;
    const InstallerFlag* known = find_installer_flag(f.value, &value);
    if (!known) {
      out.push_back(
          Finding(rules::efa_container_flags().info, "'" + f.value + "' is not an efa_installer.sh option")
              .hint("use the installer's own spelling, e.g. --skip-mpi or --mpi=openmpi5")
              .at_node(f.where, f.length));
    } else if (known->defeats_container) {
      out.push_back(Finding(rules::efa_container_flags().info,
                            "'" + f.value + "' contradicts a container install of the EFA stack")
                        .hint("remove it; the renderer already passes " + std::string(kContainerFlags))
                        .at_node(f.where, f.length));
    } else if (known->container_set) {
      out.push_back(Finding(recipe_schema_rule(),
                            "'" + f.value + "' is already in the container flags; it is not repeated")
                        .severity(Severity::Warning)
                        .hint("remove it from efa.flags")
                        .at_node(f.where, f.length));
    } else if (known->long_name == "--mpi" && value != "openmpi4" && value != "openmpi5") {
      out.push_back(
          Finding(rules::efa_container_flags().info, "--mpi takes openmpi4 or openmpi5, not '" + value + "'")
              .hint("e.g. --mpi=openmpi5")
              .at_node(f.where, f.length));
    } else if (known->long_name == "--disable-ngc" && is_ngc_base(r.base.value)) {
      out.push_back(Finding(rules::efa_disable_ngc().info,
                            "--disable-ngc on an NGC base: the installer would skip the NGC-specific "
                            "aws-ofi-nccl package")
                        .hint("remove it; the installer detects the NGC base itself")
                        .at_node(f.where, f.length));
    }
  }
}

}  // namespace trainimg::recipes
