// SPDX-License-Identifier: GPL-3.0-or-later
// The one list of rules: every library's descriptors, kind by kind, and the
// markdown table the README and docs/*.md hold for each kind.
#pragma once

#include <string>
#include <vector>

#include "common/diagnostic.h"

namespace trainimg::cmd {

/// Every rule of every library: dockerfile, recipe, image, host, fleet, in
/// that order, each library's list in its own catalogue order.
std::vector<RuleInfo> rule_catalogue();

/// The kinds, in catalogue order.
std::vector<std::string> rule_kinds();

/// `| id | severity | fires when | fix |` with one row per rule, in the
/// given order ('|' in a cell escaped). What sits between
/// `<!-- rules:KIND begin -->` and `<!-- rules:KIND end -->` in the docs.
std::string rules_markdown(const std::vector<RuleInfo>& rules);

}  // namespace trainimg::cmd
