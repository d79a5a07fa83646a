// SPDX-License-Identifier: GPL-3.0-or-later
// nccl-ib-settings: NCCL_NET=IB forces the InfiniBand transport, which EFA
// is not; other NCCL_IB_* knobs are InfiniBand-only leftovers (seed 002,
// "Using network Socket" row; seed 000, ConnectX-7 note).
#include "common/nccl_env.h"
#include "recipes/recipe/checks/checks.h"
#include "recipes/recipe/load.h"
#include "recipes/rules/rules.h"

namespace trainimg::recipes {

void check_nccl_ib_settings(const Recipe& r, Findings& out) {
  for_each_env(r, [&](const Step& s, const NamedValue& e) {
    const std::string& k = e.key.value;
    if (nccl_env::forces_ib_transport(k, e.value.value)) {
      out.push_back(Finding(rules::nccl_ib_settings().info, "step '" + s.name.value +
                                                                "' sets NCCL_NET=" + e.value.value +
                                                                "; NCCL would use InfiniBand, not EFA")
                        .hint("remove NCCL_NET (the ofi plugin selects EFA)")
                        .at_node(e.value.where, e.value.length));
    } else if (nccl_env::is_ib_only_setting(k)) {
      out.push_back(Finding(rules::nccl_ib_settings().info,
                            "step '" + s.name.value + "' sets " + k + ", an InfiniBand-only NCCL setting")
                        .severity(Severity::Warning)
                        .hint("remove InfiniBand-specific NCCL_* settings from EFA images")
                        .at_node(e.key.where, e.key.length));
    }
  });
}

}  // namespace trainimg::recipes
