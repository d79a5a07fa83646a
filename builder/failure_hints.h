// SPDX-License-Identifier: GPL-3.0-or-later
// Build output lines that the seeds document, mapped to the lint rule that
// prevents them and its fix (seed 002 "Summary of common issues").
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace trainimg::builder {

struct FailureHint {
  std::string_view needle;   ///< text the failing step printed
  std::string_view rule_id;  ///< domain.md §6 rule that catches the cause
  std::string_view hint;
};

/// The hint for one output line, or nullopt. Matching is on the documented
/// message text as printed (apt, the EFA installer, Open MPI), not on
/// Dockerfile text.
std::optional<FailureHint> hint_for_output(std::string_view line);

}  // namespace trainimg::builder
