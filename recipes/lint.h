// SPDX-License-Identifier: GPL-3.0-or-later
// `trainimg lint` on Dockerfiles: the rules of domain.md §6 (domain
// "dockerfile"), one file each under recipes/rules/, listed in
// recipes/rules/all_rules.cc.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "common/diagnostic.h"
#include "common/source_file.h"
#include "recipes/dockerfile.h"

namespace trainimg::recipes {

struct LintOptions {
  /// The host's EFA installer version (`--expect efa-installer=1.50.0`):
  /// efa-version-pin becomes an error when the Dockerfile installs another.
  std::optional<std::string> expect_efa_installer;
};

/// Lints Dockerfile text. Returns the findings (positions in `f`), sorted,
/// with `# trainimg: ignore=ID` pragmas applied. Throws trainimg::Error
/// (positioned) when `f` is not a well-formed Dockerfile.
std::vector<Diagnostic> lint_dockerfile(const SourceFile& f, const LintOptions& opt);

/// Lints an already parsed Dockerfile (`f` is the text it was parsed from).
std::vector<Diagnostic> lint_dockerfile(const Dockerfile& df, const SourceFile& f,
                                        const LintOptions& opt);

/// Every Dockerfile rule (domain "dockerfile"), in catalogue order.
const std::vector<RuleInfo>& lint_rules();

/// Parses `--expect` values: "efa-installer=1.50.0" -> sets
/// expect_efa_installer. Throws trainimg::Error for an unknown key or a value
/// that is not a version.
void apply_expect(LintOptions& opt, const std::string& key_value);

}  // namespace trainimg::recipes
