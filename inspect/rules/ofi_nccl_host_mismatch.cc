// SPDX-License-Identifier: GPL-3.0-or-later
#include "common/version.h"
#include "inspect/rules/rule.h"

namespace trainimg::inspect::rules {

namespace {
const facts::OfiPlugin* image_plugin(const facts::ImageFacts& f) {
  if (const auto* p = loaded_plugin(f); p && p->aws_ofi_nccl) return p;
  for (const auto& p : f.plugins)
    if (p.aws_ofi_nccl && !p.version.empty()) return &p;
  return nullptr;
}

void check(const RuleInfo& rule, const Context& c, std::vector<Diagnostic>& out) {
  const auto* p = image_plugin(c.facts);
  const auto& want = c.expect.aws_ofi_nccl;
  if (!p || p->version.empty() || !want || same_release(p->version, *want)) return;
  out.push_back(Finding(rule, "image aws-ofi-nccl " + p->version + " (from " + p->version_from +
                                  ") differs from the host's " + *want + " (" + c.expect.aws_ofi_nccl_from +
                                  ")")
                    .in(c.facts.reference)
                    .path(p->path, p->layer));
}
}  // namespace

const ImageRule kOfiNcclHostMismatch{
    {"ofi-nccl-host-mismatch", Severity::Error,
     "the aws-ofi-nccl NCCL would load is another release than the host's",
     "install the host's EFA installer version in the image so aws-ofi-nccl matches",
     "seed 002 \"Recommended: add the EFA installer to the training image\"", "image",
     "docs/inspect.md#rules"},
    check};

}  // namespace trainimg::inspect::rules
