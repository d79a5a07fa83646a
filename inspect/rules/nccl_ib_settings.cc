// SPDX-License-Identifier: GPL-3.0-or-later
#include <algorithm>

#include "common/nccl_env.h"
#include "inspect/rules/rule.h"

namespace trainimg::inspect::rules {

namespace {
void check(const RuleInfo& rule, const Context& c, std::vector<Diagnostic>& out) {
  const auto& f = c.facts;
  if (auto net = f.env_value("NCCL_NET"); net && nccl_env::forces_ib_transport("NCCL_NET", *net))
    out.push_back(
        Finding(rule, "NCCL_NET=" + *net + " in the final environment forces NCCL's InfiniBand transport")
            .in(c.facts.reference));
  std::vector<std::string> seen;
  for (const auto& kv : f.env) {
    std::string key = kv.substr(0, kv.find('='));
    if (!nccl_env::is_ib_only_setting(key)) continue;
    if (std::find(seen.begin(), seen.end(), key) != seen.end()) continue;
    seen.push_back(key);
    out.push_back(Finding(rule, key + "=" + f.env_value(key).value_or("") +
                                    " is an InfiniBand-only NCCL setting left in the final environment")
                      .in(c.facts.reference)
                      .severity(Severity::Warning));
  }
}
}  // namespace

const ImageRule kNcclIbSettings{
    {"nccl-ib-settings", Severity::Error,
     "InfiniBand-only NCCL settings in the final environment: error for NCCL_NET=IB, warning for other "
     "NCCL_IB_*",
     "remove NCCL_NET=IB and NCCL_IB_* from the image environment; EFA goes through the ofi plugin",
     "seed 002 \"Summary of common issues\" (Using network Socket)", "image", "docs/inspect.md#rules"},
    check};

}  // namespace trainimg::inspect::rules
