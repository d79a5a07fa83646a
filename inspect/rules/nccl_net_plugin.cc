// SPDX-License-Identifier: GPL-3.0-or-later
#include "common/nccl_env.h"
#include "inspect/rules/rule.h"

namespace trainimg::inspect::rules {

namespace {
void check(const RuleInfo& rule, const Context& c, std::vector<Diagnostic>& out) {
  const auto& f = c.facts;
  if (!has_efa_stack(f)) return;
  auto v = f.env_value("NCCL_NET_PLUGIN");
  // Seed 002's reason is what NCCL then opens: on NGC images libnccl-net.so
  // is a different (InfiniBand) plugin. Where the name NCCL opens for this
  // value is aws-ofi-nccl itself (its libnccl-net.so link, a source build
  // that installs libnccl-net.so, a path to libnccl-net-ofi.so), the EFA
  // path is taken and nothing needs changing.
  const auto* opened = f.nccl_plugin ? f.plugin_at(f.nccl_plugin->resolved) : nullptr;
  if ((!v || !nccl_env::plugin_is_ofi(*v)) && !(opened && opened->aws_ofi_nccl)) {
    // Unset, NCCL opens libnccl-net.so: on NGC images that name is a
    // different (InfiniBand) plugin (seed 002).
    std::string what =
        !v ? "is not set (NCCL opens libnccl-net.so)" : (v->empty() ? "is empty" : "is '" + *v + "'");
    out.push_back(Finding(rule, "NCCL_NET_PLUGIN " + what + " in the final environment (" + f.env_from +
                                    ") while an EFA stack is present; it must be 'ofi'")
                      .in(c.facts.reference));
    return;
  }
  const auto* p = loaded_plugin(f);
  if (p && p->aws_ofi_nccl) return;
  out.push_back(
      Finding(rule,
              "NCCL_NET_PLUGIN=ofi but no libnccl-net-ofi.so is resolvable by the loader: NCCL would fall "
              "back to 'Using network Socket'")
          .in(c.facts.reference)
          .path("libnccl-net-ofi.so"));
}
}  // namespace

const ImageRule kNcclNetPlugin{
    {"nccl-net-plugin", Severity::Error,
     "NCCL_NET_PLUGIN is not 'ofi' in the final environment while an EFA stack is present and what NCCL "
     "opens for it (libnccl-net.so when unset) is not aws-ofi-nccl, or no libnccl-net-ofi.so is resolvable "
     "(NCCL would fall back to 'Using network Socket')",
     "keep ENV NCCL_NET_PLUGIN=ofi and /opt/amazon/ofi-nccl/lib on LD_LIBRARY_PATH",
     "seed 002 \"Do not remove or change NCCL_NET_PLUGIN=ofi\"", "image", "docs/inspect.md#rules"},
    check};

}  // namespace trainimg::inspect::rules
