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
  for (const auto& v : votes) detail += (detail.empty() ? "" : "; ") + v.by + " -> " + v.prefix + " (" + v.detail + ")";
  out.push_back(finding(rule, c,
                        "the selected Open MPI is ambiguous: " + detail +
                            " (mixing them fails with 'opal_shmem_base_select failed' -> 'MPI_INIT failed')",
                        votes.back().prefix, ""));
}
}  // namespace

const ImageRule kMpiConflict{
    {"mpi-conflict", Severity::Error,
     "the selected MPI is ambiguous: PATH, OPAL_PREFIX, LD_LIBRARY_PATH and ELF run paths resolve to different "
     "prefixes",
     "point PATH, OPAL_PREFIX and LD_LIBRARY_PATH at NGC's /usr/local/mpi only; rebuild programs against it",
     "seed 002 \"Pitfall ④ — Do not layer another MPI on top of NGC Open MPI\"", "image"},
    check};

}  // namespace trainimg::inspect::rules
