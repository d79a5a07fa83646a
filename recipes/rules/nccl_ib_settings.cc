// SPDX-License-Identifier: GPL-3.0-or-later
// nccl-ib-settings: NCCL_NET=IB forces the InfiniBand transport (no EFA
// path, "Using network Socket"/failure); other NCCL_IB_* knobs only tune
// InfiniBand and are left-overs from another cluster.
#include "common/nccl_env.h"
#include "recipes/rules/rules.h"

namespace trainimg::recipes::rules {
namespace {

void check(const Context& c) {
  const RuleInfo& info = nccl_ib_settings().info;
  // On a cloud without EFA (InfiniBand) these settings are right.
  if (!shows_efa(c)) return;
  for (const Instruction* in : c.final_image) {
    if (in->keyword != "ENV") continue;
    for (const KeyValue& kv : in->pairs) {
      if (nccl_env::forces_ib_transport(kv.key, kv.value)) {
        c.report(info, Severity::Error, kv.value_span,
                 "NCCL_NET=IB forces the InfiniBand transport instead of EFA");
      } else if (nccl_env::is_ib_only_setting(kv.key)) {
        c.report(
            info, Severity::Warning, kv.key_span,
            kv.key + " is an InfiniBand-only setting; on EFA it does nothing or hides a wrong transport");
      }
    }
  }
}

}  // namespace

const Rule& nccl_ib_settings() {
  static const Rule r{
      {"nccl-ib-settings", Severity::Error,
       "where the image shows EFA (the installer, /opt/amazon/efa, FI_PROVIDER=efa, the aws-ofi-nccl "
       "plugin): "
       "NCCL_NET=IB (error); other InfiniBand-only NCCL_IB_* settings (warning)",
       "remove InfiniBand-specific NCCL_* settings; keep NCCL_NET_PLUGIN=ofi",
       "seed 002, Verifying operation ('Using network Socket' row); seed 000 ConnectX-7 note", "dockerfile"},
      check};
  return r;
}

}  // namespace trainimg::recipes::rules
