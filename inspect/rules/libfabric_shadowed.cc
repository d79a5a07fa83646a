// SPDX-License-Identifier: GPL-3.0-or-later
#include "inspect/rules/rule.h"

namespace trainimg::inspect::rules {

namespace {
void check(const RuleInfo& rule, const Context& c, std::vector<Diagnostic>& out) {
  const auto& f = c.facts;
  const auto* order = f.loader_for("libfabric.so.1");
  if (!order || order->candidates.size() < 2) return;
  const facts::LoaderCandidate* efa = nullptr;
  for (const auto& cand : order->candidates)
    if (cand.resolved.starts_with("/opt/amazon/efa/") && !efa) efa = &cand;
  const auto* sel = order->selected();
  // Two names for one file are not two libraries.
  if (!efa || sel->resolved == efa->resolved) return;
  out.push_back(Finding(rule, "the loader picks " + sel->path + " (" + sel->how + ") before the EFA build " +
                                  efa->path + " (" + efa->how + ")")
                    .in(c.facts.reference)
                    .path(sel->resolved, sel->layer));
}
}  // namespace

const ImageRule kLibfabricShadowed{
    {"libfabric-shadowed", Severity::Error,
     "more than one libfabric.so.1 and the loader order of the final environment picks one that is not the "
     "EFA "
     "build",
     "put /opt/amazon/efa/lib before other directories in LD_LIBRARY_PATH, or remove the other libfabric "
     "(e.g. Ubuntu's libfabric1)",
     "seed 002 \"Pitfall ③ — LD_LIBRARY_PATH\"", "image", "docs/inspect.md#rules"},
    check};

}  // namespace trainimg::inspect::rules
