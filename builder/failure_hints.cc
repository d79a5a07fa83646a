// SPDX-License-Identifier: GPL-3.0-or-later
#include "builder/failure_hints.h"

namespace trainimg::builder {
namespace {

constexpr std::string_view kAptHint =
    "the apt package lists were empty when efa_installer.sh ran: run `apt-get update` earlier in the SAME RUN "
    "as the installer, and do not remove /var/lib/apt/lists before it (seed 002, pitfall 1)";
constexpr std::string_view kKmodHint =
    "inside a container there is no kernel to build for: pass --skip-kmod (with -y --skip-limit-conf "
    "--no-verify) to efa_installer.sh (seed 002, pitfall 2)";
constexpr std::string_view kPromptHint =
    "a build has no terminal to answer prompts: pass -y to efa_installer.sh (seed 002, pitfall 2)";
constexpr std::string_view kMpiHint =
    "two Open MPI installations are mixed: keep the NGC image's Open MPI and do not build or run against "
    "/opt/amazon/openmpi (seed 002, pitfall 4)";

// Ordered: the first needle found decides.
constexpr FailureHint kHints[] = {
    {"Unable to locate package environment-modules", "efa-apt-update", kAptHint},
    {"failed to install third-party dependencies", "efa-apt-update", kAptHint},
    {"unable to detect installed kernels", "efa-container-flags", kKmodHint},
    {"kernel header of the current kernel version cannot be installed", "efa-container-flags", kKmodHint},
    {"Do you wish to continue?", "efa-container-flags", kPromptHint},
    {"opal_shmem_base_select failed", "mpi-second-install", kMpiHint},
    {"MPI_INIT failed", "mpi-second-install", kMpiHint},
};

}  // namespace

std::optional<FailureHint> hint_for_output(std::string_view line) {
  for (const auto& h : kHints)
    if (line.find(h.needle) != std::string_view::npos) return h;
  return std::nullopt;
}

}  // namespace trainimg::builder
