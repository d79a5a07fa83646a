// SPDX-License-Identifier: GPL-3.0-or-later
// policy-ignore-expired: issue 14 (policy): an `ignore:` entry past its
// `until` date hides nothing any more and is itself a warning at the entry,
// for each entry whose rule this run evaluated.
#include "common/policy/rules.h"

namespace trainimg::policy {

namespace {

void check(const RuleInfo& rule, const PolicyContext& c) {
  for (const auto& ig : c.policy.ignores) {
    if (ig.until.empty() || ig.until >= c.today || !c.evaluated.count(ig.id)) continue;
    c.report.findings.push_back(
        Finding(rule, "the ignore of " + ig.id + (ig.path.empty() ? "" : " in " + ig.path) + " expired on " +
                          ig.until + " (reason: " + ig.reason + "): its findings are reported again")
            .in(ig.at.file)
            .at(ig.at.line, ig.at.column, 1, ig.line_text));
  }
}

}  // namespace

const PolicyRule kIgnoreExpired{
    {"policy-ignore-expired", Severity::Warning,
     "an `ignore:` entry of .trainimg.yaml is past its `until` date: the findings it hid are reported again",
     "fix the findings, or renew the entry with a new `until` date and the reason it still holds",
     "issue 14 (policy)", "policy", "docs/policy.md#rules"},
    check};

}  // namespace trainimg::policy
