// SPDX-License-Identifier: GPL-3.0-or-later
// efa-version-pin: the image must install the host AMI's installer version,
// so the tarball must name a fixed version (not `latest`, not an ARG without
// a default), and with --expect it must be that version.
#include <set>

#include "common/version.h"
#include "recipes/rules/rules.h"

namespace trainimg::recipes::rules {
namespace {

void check(const Context& c) {
  const RuleInfo& info = efa_version_pin().info;
  const auto& expect = c.opt.expect_efa_installer;
  std::set<const Instruction*> seen;
  for (const Instruction* in : c.final_image) {
    if (in->keyword != "RUN") continue;
    for (const auto& cmd : in->script.commands) {
      for (const Word& w : cmd.argv) {
        auto v = installer_tarball_version(w.text);
        if (!v || !seen.insert(in).second) continue;  // one finding per RUN: curl and tar name the same file
        std::string exp = expect ? " (the host has " + *expect + ")" : "";
        if (*v == "latest") {
          c.add(Finding(info, "the EFA installer tarball is 'latest': its version changes under you" + exp)
                    .severity(expect ? Severity::Error : Severity::Warning)
                    .at(c.src, w.span));
        } else if (!looks_like_version(*v)) {
          c.add(Finding(info, "the EFA installer version '" + *v +
                                  "' is not pinned (an ARG without a default, or not a version)" + exp)
                    .severity(expect ? Severity::Error : Severity::Warning)
                    .at(c.src, w.span));
        } else if (expect && compare_versions(*v, *expect) != 0) {
          c.add(Finding(info, "the image installs EFA installer " + *v + " but the host has " + *expect)
                    .severity(Severity::Error)
                    .at(c.src, w.span));
        }
      }
    }
  }
}

}  // namespace

const Rule& efa_version_pin() {
  static const Rule r{
      {"efa-version-pin", Severity::Warning,
       "the installer tarball `aws-efa-installer-V.tar.gz` is `latest` or V is not a pinned version (an "
       "`ARG` without a default); error with `--expect efa-installer=X` when V ≠ X (or cannot be shown "
       "equal)",
       "pin ARG EFA_INSTALLER_VERSION=<the host AMI's installer version> and download "
       "aws-efa-installer-${EFA_INSTALLER_VERSION}.tar.gz",
       "seed 002, Recommended: add the EFA installer to the training image (same version as the host)",
       "dockerfile", "docs/lint.md#rules"},
      check};
  return r;
}

}  // namespace trainimg::recipes::rules
