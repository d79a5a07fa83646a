// SPDX-License-Identifier: GPL-3.0-or-later
#include "inspect/rules/rule.h"

namespace trainimg::inspect::rules {

namespace {
void check(const RuleInfo& rule, const Context& c, std::vector<Diagnostic>& out) {
  const auto& mpis = c.facts.mpis;
  if (mpis.size() < 2) return;
  std::string list;
  bool ngc = false, others_are_installer = true;
  for (const auto& m : mpis) {
    list += (list.empty() ? "" : ", ") + m.path + " (" + (m.version.empty() ? "version unknown" : m.version) +
            ", " + m.origin + ")";
    if (m.origin == "ngc")
      ngc = true;
    else if (m.origin != "efa-installer")
      others_are_installer = false;
  }
  // The installer lays down /opt/amazon/openmpi and /opt/amazon/openmpi5
  // together (domain.md §1, §3); with no other Open MPI beside them there is
  // no base MPI to mix them with (pitfall ④ is about NGC's).
  if (!ngc && others_are_installer) return;
  std::string msg = std::to_string(mpis.size()) + " Open MPI installations: " + list;
  // Seed 002 pitfall ④: the installer lays down /opt/amazon/openmpi* beside
  // NGC's /usr/local/mpi; that is expected as long as nothing selects it
  // (mpi-conflict judges the selection). domain.md §6 keeps the rule's
  // severity (warning) and asks the message to say that it is expected.
  if (ngc && others_are_installer) {
    out.push_back(
        Finding(rule,
                msg + "; the EFA installer's copies beside NGC's are expected: keep using NGC's and never "
                      "build or run against /opt/amazon/openmpi*")
            .in(c.facts.reference)
            .path(mpis.front().path, mpis.front().layer));
    return;
  }
  out.push_back(Finding(rule, msg).in(c.facts.reference).path(mpis.back().path, mpis.back().layer));
}
}  // namespace

const ImageRule kMpiMultipleInstalls{
    {"mpi-multiple-installs", Severity::Warning,
     "more than one Open MPI installation (when the extra ones are the EFA installer's "
     "/opt/amazon/openmpi* beside NGC's, the message says that this is expected; the installer's own "
     "/opt/amazon/openmpi and /opt/amazon/openmpi5 alone are no finding)",
     "do not layer another Open MPI on the NGC image; leave NGC's MPI as is",
     "seed 002 \"Pitfall ④ — Do not layer another MPI on top of NGC Open MPI\"", "image",
     "docs/inspect.md#rules"},
    check};

}  // namespace trainimg::inspect::rules
