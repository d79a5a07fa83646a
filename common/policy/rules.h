// SPDX-License-Identifier: GPL-3.0-or-later
// The policy rules' shared contract (internal to the policy code): one
// constant per rule, each in its own file under common/policy/, listed once
// in common/policy/rules.def. The public part (policy_rules(),
// is_policy_rule(), apply_policy()) is in common/policy/policy.h.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "common/policy/policy.h"

namespace trainimg::policy {

/// What every policy rule sees: the report the config is applied to, the
/// config, and today's date.
struct PolicyContext {
  Report& report;  ///< findings go to report.findings
  const Policy& policy;
  const std::string& today;                ///< YYYY-MM-DD
  const std::set<std::string>& evaluated;  ///< the ids of the rules this run evaluated
};

/// A policy rule: its description and its check, which adds findings of
/// `rule` (its own info) to the report.
struct PolicyRule {
  RuleInfo info;
  void (*check)(const RuleInfo& rule, const PolicyContext& c);
};

/// The policy rules, in rules.def order.
const std::vector<const PolicyRule*>& all_policy_rules();

// The constants of rules.def.
#define POLICY_RULE(name) extern const PolicyRule name;
#include "common/policy/rules.def"
#undef POLICY_RULE

}  // namespace trainimg::policy
