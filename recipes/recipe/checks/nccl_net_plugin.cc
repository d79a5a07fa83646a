// SPDX-License-Identifier: GPL-3.0-or-later
// nccl-net-plugin: NGC sets NCCL_NET_PLUGIN=ofi; the default-named
// libnccl-net.so in the image is the InfiniBand plugin, so any other value
// (or an empty one) makes NCCL fall back to sockets (seed 002, "Do not
// remove or change NCCL_NET_PLUGIN=ofi").
#include "common/nccl_env.h"
#include "recipes/recipe/checks/checks.h"
#include "recipes/recipe/load.h"
#include "recipes/rules/rules.h"

namespace trainimg::recipes {

void check_nccl_net_plugin(const Recipe& r, Findings& out) {
  for_each_env(r, [&](const Step& s, const NamedValue& e) {
    if (e.key.value != "NCCL_NET_PLUGIN" || nccl_env::plugin_is_ofi(e.value.value)) return;
    const Text& at = e.has_value ? e.value : e.key;
    std::string what =
        e.value.value.empty() ? "empties NCCL_NET_PLUGIN" : "sets NCCL_NET_PLUGIN=" + e.value.value;
    out.push_back(Finding(rules::nccl_net_plugin().info,
                          "step '" + s.name.value + "' " + what + "; NCCL would not load the EFA plugin")
                      .hint("remove this env entry (NGC already sets NCCL_NET_PLUGIN=ofi) or set it to ofi")
                      .at_node(at.where, at.length));
  });
}

}  // namespace trainimg::recipes
