// SPDX-License-Identifier: GPL-3.0-or-later
// nccl-net-plugin: NGC images set NCCL_NET_PLUGIN=ofi; the default-named
// libnccl-net.so is an InfiniBand plugin, so any other value (or an empty
// one) makes NCCL miss the EFA path. The OFI plugin named by its library
// (`/opt/amazon/ofi-nccl/lib/libnccl-net-ofi.so`) is loaded by NCCL: a
// warning only, since the seed says not to change `ofi`.
#include "common/nccl_env.h"
#include "recipes/rules/rules.h"

namespace trainimg::recipes::rules {
namespace {

void check(const Context& c) {
  // The NGC base sets NCCL_NET_PLUGIN=ofi itself; elsewhere nothing does.
  std::string hint = c.ngc_base
                         ? "remove the ENV (the NGC base sets NCCL_NET_PLUGIN=ofi) or set NCCL_NET_PLUGIN=ofi"
                         : "set NCCL_NET_PLUGIN=ofi";
  for (const Instruction* in : c.final_image) {
    if (in->keyword != "ENV") continue;
    for (const KeyValue& kv : in->pairs) {
      if (kv.key != "NCCL_NET_PLUGIN" || nccl_env::plugin_is_ofi(kv.value) || kv.unresolved) continue;
      Span at = kv.value.empty() ? kv.key_span : kv.value_span;
      if (nccl_env::names_ofi_plugin_library(kv.value)) {
        c.add(Finding(nccl_net_plugin().info, "NCCL_NET_PLUGIN names the OFI plugin by its library ('" +
                                                  kv.value +
                                                  "'): NCCL loads it, but the seed keeps NCCL_NET_PLUGIN=ofi")
                  .severity(Severity::Warning)
                  .at(c.src, at)
                  .hint("set NCCL_NET_PLUGIN=ofi: NCCL then loads libnccl-net-ofi.so through the library "
                        "path, the installer's first"));
        continue;
      }
      c.add(Finding(nccl_net_plugin().info,
                    kv.value.empty()
                        ? "NCCL_NET_PLUGIN is emptied: NCCL would load the default-named (InfiniBand) plugin"
                        : "NCCL_NET_PLUGIN is set to '" + kv.value + "' instead of 'ofi'")
                .at(c.src, at)
                .hint(hint));
    }
  }
}

}  // namespace

const Rule& nccl_net_plugin() {
  static const Rule r{
      {"nccl-net-plugin", Severity::Error,
       "`ENV NCCL_NET_PLUGIN` is set to anything but `ofi`, or emptied; warning when it names the OFI "
       "plugin's library (`libnccl-net-ofi.so` or a path to it), which NCCL loads too",
       "set NCCL_NET_PLUGIN=ofi (on an NGC base, which sets it, removing the ENV does too)",
       "seed 002, The EFA stack already included in the NGC image (do not remove or change "
       "NCCL_NET_PLUGIN=ofi)",
       "dockerfile", "docs/lint.md#rules"},
      check};
  return r;
}

}  // namespace trainimg::recipes::rules
