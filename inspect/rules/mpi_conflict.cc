// SPDX-License-Identifier: GPL-3.0-or-later
#include <set>

#include "inspect/rules/rule.h"

namespace trainimg::inspect::rules {

namespace {
void check(const RuleInfo& rule, const Context& c, std::vector<Diagnostic>& out) {
  const auto& votes = c.facts.mpi_votes;
  std::set<std::string> prefixes;
  for (const auto& v : votes) prefixes.insert(v.prefix);
  if (prefixes.size() < 2) return;
  std::string detail;
  for (const auto& v : votes)
    detail += (detail.empty() ? "" : "; ") + v.by + " -> " + v.prefix + " (" + v.detail + ")";
  out.push_back(
      Finding(rule, "the selected Open MPI is ambiguous: " + detail +
                        " (mixing them fails with 'opal_shmem_base_select failed' -> 'MPI_INIT failed')")
          .in(c.facts.reference)
          .path(votes.back().prefix));
}
}  // namespace

const ImageRule kMpiConflict{
    {"mpi-conflict", Severity::Error,
     "the selected Open MPI is ambiguous: `PATH` (`mpirun`), `OPAL_PREFIX`, the loader's `libmpi.so.40` and "
     "the run paths of programs needing `libmpi` resolve to different prefixes (installations' own tools are "
     "not counted)",
     "point PATH, OPAL_PREFIX and LD_LIBRARY_PATH at NGC's /usr/local/mpi only; rebuild programs against it",
     "seed 002 \"Pitfall ④ — Do not layer another MPI on top of NGC Open MPI\"", "image",
     "docs/inspect.md#rules"},
    check};

}  // namespace trainimg::inspect::rules
