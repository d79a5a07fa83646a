// SPDX-License-Identifier: GPL-3.0-or-later
// efa-disable-ngc: on an NGC base the installer detects NGC and installs the
// NGC-specific aws-ofi-nccl package; --disable-ngc throws that away.
#include "recipes/rules/rules.h"

namespace trainimg::recipes::rules {
namespace {

void check(const Context& c) {
  if (!c.ngc_base) return;
  for (const InstallerRun& r : installer_runs(c)) {
    auto it = r.options.find("disable-ngc");
    if (it == r.options.end()) continue;
    c.add(Finding(efa_disable_ngc().info,
                  "--disable-ngc on an NGC base (" + c.df.root_image(c.df.final_stage()) +
                      "): the installer would skip the NGC-specific aws-ofi-nccl package")
              .at(c.src, it->second->span));
  }
}

}  // namespace

const Rule& efa_disable_ngc() {
  static const Rule r{
      {"efa-disable-ngc", Severity::Warning,
       "`efa_installer.sh` gets `--disable-ngc` while the final image is built on an NGC image (not "
       "`nvcr.io/nvidia/cuda`)",
       "drop --disable-ngc: the installer detects the NGC base and installs its aws-ofi-nccl package",
       "seed 002, Pitfall 2 (the installer detects the NGC base)", "dockerfile", "docs/lint.md#rules"},
      check};
  return r;
}

}  // namespace trainimg::recipes::rules
