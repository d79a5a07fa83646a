// SPDX-License-Identifier: GPL-3.0-or-later
#include "common/version.h"
#include "inspect/rules/rule.h"

namespace trainimg::inspect::rules {

namespace {
// The copy that matters is the one the loader picks; without a loadable one,
// the EFA build is what the installer would have shipped.
const facts::Libfabric* image_libfabric(const facts::ImageFacts& f) {
  if (const auto* l = loaded_libfabric(f)) return l;
  for (const auto& l : f.libfabrics)
    if (l.efa_build) return &l;
  return nullptr;
}

void check(const RuleInfo& rule, const Context& c, std::vector<Diagnostic>& out) {
  const auto* lib = image_libfabric(c.facts);
  const auto& want = c.expect.libfabric;
  if (!lib || lib->version.empty() || !want || same_release(lib->version, *want)) return;
  out.push_back(Finding(rule, "image libfabric " + lib->version + " (from " + lib->version_from +
                                  ") differs from the host's " + *want + " (" + c.expect.libfabric_from + ")")
                    .in(c.facts.reference)
                    .path(lib->path, lib->layer));
}
}  // namespace

const ImageRule kLibfabricHostMismatch{
    {"libfabric-host-mismatch", Severity::Error,
     "the libfabric the loader picks (else the EFA build) is another release than the host's",
     "install the host's EFA installer version in the image so libfabric matches",
     "seed 002 \"Recommended: add the EFA installer to the training image\"", "image",
     "docs/inspect.md#rules"},
    check};

}  // namespace trainimg::inspect::rules
