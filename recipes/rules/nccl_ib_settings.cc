// SPDX-License-Identifier: GPL-3.0-or-later
// nccl-ib-settings: NCCL_NET=IB forces the InfiniBand transport (no EFA
// path, "Using network Socket"/failure); other NCCL_IB_* knobs only tune
// InfiniBand and are left-overs from another cluster.
#include <cctype>

#include "recipes/rules/rules.h"

namespace trainimg::recipes::rules {
namespace {

std::string upper(std::string s) {
  for (auto& ch : s) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  return s;
}

void check(const Context& c) {
  const RuleInfo& info = nccl_ib_settings().info;
  for (const Instruction* in : c.final_image) {
    if (in->keyword != "ENV") continue;
    for (const KeyValue& kv : in->pairs) {
      if (kv.key == "NCCL_NET" && upper(kv.value) == "IB") {
        c.report(info, Severity::Error, kv.value_span, "NCCL_NET=IB forces the InfiniBand transport instead of EFA");
      } else if (kv.key.rfind("NCCL_IB_", 0) == 0 && kv.key != "NCCL_IB_DISABLE") {
        // NCCL_IB_DISABLE only turns the IB transport off, which is harmless on EFA.
        c.report(info, Severity::Warning, kv.key_span,
                 kv.key + " is an InfiniBand-only setting; on EFA it does nothing or hides a wrong transport");
      }
    }
  }
}

}  // namespace

const Rule& nccl_ib_settings() {
  static const Rule r{{"nccl-ib-settings", Severity::Error,
                       "NCCL_NET=IB (error); other InfiniBand-only NCCL_IB_* settings (warning)",
                       "remove InfiniBand-specific NCCL_* settings; keep NCCL_NET_PLUGIN=ofi",
                       "seed 002, Verifying operation ('Using network Socket' row); seed 000 ConnectX-7 note",
                       "dockerfile"},
                      check};
  return r;
}

}  // namespace trainimg::recipes::rules
