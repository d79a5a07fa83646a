// SPDX-License-Identifier: GPL-3.0-or-later
// nccl-net-plugin: NGC images set NCCL_NET_PLUGIN=ofi; the default-named
// libnccl-net.so is an InfiniBand plugin, so any other value (or an empty
// one) makes NCCL miss the EFA path.
#include "common/nccl_env.h"
#include "recipes/rules/rules.h"

namespace trainimg::recipes::rules {
namespace {

void check(const Context& c) {
  for (const Instruction* in : c.final_image) {
    if (in->keyword != "ENV") continue;
    for (const KeyValue& kv : in->pairs) {
      if (kv.key != "NCCL_NET_PLUGIN" || nccl_env::plugin_is_ofi(kv.value) || kv.unresolved) continue;
      Span at = kv.value.empty() ? kv.key_span : kv.value_span;
      c.add(Finding(nccl_net_plugin().info,
                    kv.value.empty()
                        ? "NCCL_NET_PLUGIN is emptied: NCCL would load the default-named (InfiniBand) plugin"
                        : "NCCL_NET_PLUGIN is set to '" + kv.value + "' instead of 'ofi'")
                .at(c.src, at));
    }
  }
}

}  // namespace

const Rule& nccl_net_plugin() {
  static const Rule r{
      {"nccl-net-plugin", Severity::Error, "`ENV NCCL_NET_PLUGIN` is set to anything but `ofi`, or emptied",
       "remove the ENV (the NGC base sets NCCL_NET_PLUGIN=ofi) or set NCCL_NET_PLUGIN=ofi",
       "seed 002, The EFA stack already included in the NGC image (do not remove or change "
       "NCCL_NET_PLUGIN=ofi)",
       "dockerfile", "docs/lint.md#rules"},
      check};
  return r;
}

}  // namespace trainimg::recipes::rules
