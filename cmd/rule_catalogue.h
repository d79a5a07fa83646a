// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <vector>

#include "common/diagnostic.h"

namespace trainimg::cmd {

/// Every rule of every library (lint, image, host), in that order. Each
/// library adds its list in rule_catalogue.cc as it lands.
std::vector<RuleInfo> rule_catalogue();

}  // namespace trainimg::cmd
