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
        c.add(Finding(info, "NCCL_NET=IB forces the InfiniBand transport instead of EFA")
                  .at(c.src, kv.value_span));
      } else if (nccl_env::is_ib_only_setting(kv.key)) {
        c.add(Finding(info,
                      kv.key +
                          " is an InfiniBand-only setting; on EFA it does nothing or hides a wrong transport")
                  .severity(Severity::Warning)
                  .at(c.src, kv.key_span));
      }
    }
  }
}

}  // namespace

const Rule& nccl_ib_settings() {
  static const Rule r{
      {"nccl-ib-settings", Severity::Error,
       "only where the image shows EFA (the installer runs; a `RUN`/`ENV` names `/opt/amazon/efa`, "
       "aws-ofi-nccl or `FI_PROVIDER=efa`; the base is an AWS Deep Learning Container): `ENV NCCL_NET=IB` "
       "(error); any other `NCCL_IB_*` except `NCCL_IB_DISABLE` (warning)",
       "remove InfiniBand-specific NCCL_* settings; keep NCCL_NET_PLUGIN=ofi",
       "seed 002, Verifying operation ('Using network Socket' row); seed 000 ConnectX-7 note", "dockerfile",
       "docs/lint.md#rules"},
      check};
  return r;
}

}  // namespace trainimg::recipes::rules
