// SPDX-License-Identifier: GPL-3.0-or-later
// efa-container-flags: in a container there is no kernel and no EFA device,
// so the installer needs -y --skip-kmod --skip-limit-conf --no-verify; -g
// (GPUDirect: the seed's "RDMA path between GPUs/across nodes") is expected
// where the image shows a GPU stack, not in a CPU-only MPI image. Flags are
// read as getopt reads them.
#include "recipes/rules/rules.h"

namespace trainimg::recipes::rules {
namespace {

struct Needed {
  const char* long_name;
  const char* spelling;
};
constexpr Needed kRequired[] = {{"yes", "-y"},
                                {"skip-kmod", "--skip-kmod"},
                                {"skip-limit-conf", "--skip-limit-conf"},
                                {"no-verify", "--no-verify"}};

void check(const Context& c) {
  const RuleInfo& info = efa_container_flags().info;
  bool gpu = shows_gpu_stack(c);
  for (const InstallerRun& r : installer_runs(c)) {
    // --build-ngc (newer installers) is documented upstream as implying the
    // four container flags; not verified against an installer source here.
    bool build_ngc = r.options.count("build-ngc") > 0;
    std::string missing;
    for (const auto& n : kRequired)
      if (!build_ngc && !r.options.count(n.long_name))
        missing += std::string(missing.empty() ? "" : ", ") + n.spelling;
    if (!missing.empty())
      c.add(Finding(info, "efa_installer.sh lacks the container flag(s) " + missing)
                .at(c.src, r.argv[0]->span));
    if (gpu && !r.options.count("enable-gdr"))
      c.add(Finding(info, "efa_installer.sh lacks -g (GPUDirect configuration)")
                .severity(Severity::Warning)
                .at(c.src, r.argv[0]->span));
  }
}

}  // namespace

const Rule& efa_container_flags() {
  static const Rule r{
      {"efa-container-flags", Severity::Error,
       "`efa_installer.sh` lacks any of `-y`, `--skip-kmod`, `--skip-limit-conf`, `--no-verify` (any "
       "spelling: `--yes`, `-k`, `-l`, `-n`, clusters, unique prefixes); warning when `-g`/`--enable-gdr` is "
       "missing where the image shows a GPU stack (a CUDA/NGC/DLC base, CUDA or NCCL packages, NCCL or CUDA "
       "named in a `RUN`/`ENV`)",
       "run ./efa_installer.sh -y -g --skip-kmod --skip-limit-conf --no-verify",
       "seed 002, Pitfall 2: container-specific EFA installer flags", "dockerfile", "docs/lint.md#rules"},
      check};
  return r;
}

}  // namespace trainimg::recipes::rules
