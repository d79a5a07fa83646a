// SPDX-License-Identifier: GPL-3.0-or-later
#include "common/version.h"
#include "inspect/rules/rule.h"

namespace trainimg::inspect::rules {

namespace {
void check(const RuleInfo& rule, const Context& c, std::vector<Diagnostic>& out) {
  const auto& inst = c.facts.installer;
  const auto& want = c.expect.efa_installer;
  if (!inst || inst->version.empty() || !want || same_release(inst->version, *want)) return;
  out.push_back(Finding(rule, "image EFA installer " + inst->version + " differs from the host's " + *want +
                                  " (" + c.expect.efa_installer_from + ")")
                    .in(c.facts.reference)
                    .path(inst->path, inst->layer));
}
}  // namespace

const ImageRule kEfaHostMismatch{
    {"efa-host-mismatch", Severity::Error,
     "the image's EFA installer version differs from the host's (--host PROFILE or --expect efa-installer=X)",
     "build the image with ARG EFA_INSTALLER_VERSION set to the host AMI's installer version",
     "seed 002 \"Recommended: add the EFA installer to the training image\"", "image",
     "docs/inspect.md#rules"},
    check};

}  // namespace trainimg::inspect::rules
