// SPDX-License-Identifier: GPL-3.0-or-later
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "common/policy/rules.h"

namespace trainimg::policy {
namespace {
using ::testing::ElementsAre;
using ::testing::IsEmpty;

// The findings kIgnoreExpired's check adds for `config` on `today`, as
// "file:line:col: message", with efa-apt-update evaluated.
std::vector<std::string> expired(const std::string& config, const std::string& today) {
  RuleInfo evaluated_rule{"efa-apt-update", Severity::Error, "s", "f", "seed", "dockerfile"};
  Policy p = parse_policy(SourceFile(".trainimg.yaml", config), {evaluated_rule});
  Report r;
  std::set<std::string> evaluated = {"efa-apt-update"};
  kIgnoreExpired.check(kIgnoreExpired.info, PolicyContext{r, p, today, evaluated});
  std::vector<std::string> out;
  for (const auto& d : r.findings) out.push_back(d.location() + ": " + d.message);
  return out;
}

TEST(PolicyIgnoreExpired, QuietWhileTheIgnoreHolds) {
  EXPECT_THAT(expired("ignore: [{id: efa-apt-update, until: 2026-12-04, reason: r}]\n", "2026-12-04"),
              IsEmpty());
  EXPECT_THAT(expired("ignore: [{id: efa-apt-update, reason: no expiry}]\n", "2099-01-01"), IsEmpty());
}

TEST(PolicyIgnoreExpired, FiresAtTheEntryTheDayAfterUntil) {
  EXPECT_THAT(
      expired("ignore:\n  - {id: efa-apt-update, path: docker/*, until: 2026-12-03, reason: r}\n",
              "2026-12-04"),
      ElementsAre(".trainimg.yaml:2:5: the ignore of efa-apt-update in docker/* expired on 2026-12-03 "
                  "(reason: r): its findings are reported again"));
}

TEST(PolicyIgnoreExpired, NearMissARuleThisRunDidNotEvaluate) {
  Policy p = parse_policy(
      SourceFile(".trainimg.yaml", "ignore: [{id: efa-apt-update, until: 2020-01-01, reason: r}]\n"),
      {RuleInfo{"efa-apt-update", Severity::Error, "s", "f", "seed", "dockerfile"}});
  Report r;
  std::set<std::string> evaluated;  // a run of other rules: the ignore is not about it
  const std::string today = "2026-12-04";
  kIgnoreExpired.check(kIgnoreExpired.info, PolicyContext{r, p, today, evaluated});
  EXPECT_THAT(r.findings, IsEmpty());
}

TEST(PolicyIgnoreExpired, IsInTheCatalogueOfPolicyRules) {
  ASSERT_EQ(policy_rules().size(), all_policy_rules().size());
  EXPECT_EQ(policy_rules().front().id, kIgnoreExpired.info.id);
  EXPECT_TRUE(is_policy_rule("policy-ignore-expired"));
  EXPECT_FALSE(is_policy_rule("efa-apt-update"));
  // Static storage: the same list, so views of its ids outlive the call.
  EXPECT_EQ(&policy_rules(), &policy_rules());
}

}  // namespace
}  // namespace trainimg::policy
