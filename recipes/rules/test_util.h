// SPDX-License-Identifier: GPL-3.0-or-later
// Helpers for the rule tests: lint a Dockerfile text, and list one rule's
// findings as "line:col severity" strings so a test pins exact positions.
#pragma once

#include <string>
#include <vector>

#include "recipes/recipes.h"

namespace trainimg::recipes::testing {

/// The seed 002 Dockerfile (first block), which every rule accepts.
inline const std::string kSeedShort =
    "FROM nvcr.io/nvidia/pytorch:26.08-py3\n"
    "ARG EFA_INSTALLER_VERSION=1.50.0\n"
    "RUN apt-get update \\\n"
    " && apt-get install -y --no-install-recommends curl ca-certificates git \\\n"
    " && cd /tmp \\\n"
    " && curl -fsSL -O https://efa-installer.amazonaws.com/aws-efa-installer-${EFA_INSTALLER_VERSION}.tar.gz "
    "\\\n"
    " && tar -xf aws-efa-installer-${EFA_INSTALLER_VERSION}.tar.gz \\\n"
    " && cd aws-efa-installer \\\n"
    " && ./efa_installer.sh -y -g --skip-kmod --skip-limit-conf --no-verify \\\n"
    " && cd / && rm -rf /tmp/aws-efa-installer* /var/lib/apt/lists/*\n"
    "ENV LD_LIBRARY_PATH=/opt/amazon/ofi-nccl/lib:/opt/amazon/efa/lib:${LD_LIBRARY_PATH}\n";

/// "line:col severity" of every finding of `rule` in `text`.
inline std::vector<std::string> hits(const std::string& text, const std::string& rule,
                                     const LintOptions& opt = {}) {
  std::vector<std::string> out;
  for (const auto& d : lint_dockerfile(SourceFile("Dockerfile", text), opt))
    if (d.rule_id == rule)
      out.push_back(std::to_string(d.line) + ":" + std::to_string(d.column) + " " +
                    std::string(to_string(d.severity)));
  return out;
}

/// Every finding of `text` (all rules) as "rule line:col severity".
inline std::vector<std::string> all_hits(const std::string& text, const LintOptions& opt = {}) {
  std::vector<std::string> out;
  for (const auto& d : lint_dockerfile(SourceFile("Dockerfile", text), opt))
    out.push_back(d.rule_id + " " + std::to_string(d.line) + ":" + std::to_string(d.column) + " " +
                  std::string(to_string(d.severity)));
  return out;
}

/// `text` with the first occurrence of `from` replaced by `to`.
inline std::string replace(std::string text, const std::string& from, const std::string& to) {
  auto p = text.find(from);
  if (p != std::string::npos) text.replace(p, from.size(), to);
  return text;
}

}  // namespace trainimg::recipes::testing
