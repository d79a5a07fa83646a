// SPDX-License-Identifier: GPL-3.0-or-later
#include "inspect/rules/rule.h"

namespace trainimg::inspect::rules {

namespace {
void check(const RuleInfo& rule, const Context& c, std::vector<Diagnostic>& out) {
  const auto& f = c.facts;
  if (f.installer) return;
  std::string msg = "no EFA installer manifest: the image relies on the base's built-in EFA stack";
  for (const auto& l : f.libfabrics)
    if (l.efa_build) {
      msg += " (libfabric " + (l.version.empty() ? std::string("of unknown version") : l.version) + " at " +
             l.path + ")";
      break;
    }
  msg += ", whose version may differ from the host's";
  out.push_back(Finding(rule, msg).in(c.facts.reference).path("/opt/amazon/efa_installed_packages"));
}
}  // namespace

const ImageRule kEfaInstallerMissing{
    {"efa-installer-missing", Severity::Warning,
     "no installer manifest (`/opt/amazon/efa_installed_packages`): the image relies on the base's built-in "
     "EFA stack, whose version may differ from the host's",
     "install the host's EFA installer version in the image: efa_installer.sh -y -g --skip-kmod "
     "--skip-limit-conf "
     "--no-verify",
     "seed 002 \"The EFA version inside the image may differ from the host\"", "image",
     "docs/inspect.md#rules"},
    check};

}  // namespace trainimg::inspect::rules
