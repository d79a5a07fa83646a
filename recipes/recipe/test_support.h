// SPDX-License-Identifier: GPL-3.0-or-later
// Helpers for the recipe tests: load recipe text from a string and show
// findings as "LINE:COL severity [rule] message" for exact assertions.
#pragma once

#include <string>
#include <vector>

#include "common/source_file.h"
#include "recipes/recipe/checks/checks.h"
#include "recipes/recipe/load.h"

namespace trainimg::recipes::testing {

inline std::string brief(const Diagnostic& d) {
  std::string loc = d.file == "recipe.yaml" ? std::string() : d.file + ":";
  return loc + std::to_string(d.line) + ":" + std::to_string(d.column) + " " +
         std::string(to_string(d.severity)) + " [" + d.rule_id + "] " + d.message;
}

inline std::vector<std::string> briefs(const std::vector<Diagnostic>& ds) {
  std::vector<std::string> out;
  for (const auto& d : ds) out.push_back(brief(d));
  return out;
}

inline LoadResult load_text(const std::string& text, const std::vector<std::string>& overrides = {},
                            const std::string& context = "") {
  return load_recipe(SourceFile("recipe.yaml", text), overrides, context);
}

/// Loader diagnostics of `text` (schema only).
inline std::vector<std::string> schema_of(const std::string& text,
                                          const std::vector<std::string>& overrides = {}) {
  return briefs(load_text(text, overrides).diagnostics);
}

/// Findings of the recipe-model rules (checks/) on a recipe that loads cleanly.
inline std::vector<std::string> checks_of(const std::string& text) {
  LoadResult lr = load_text(text);
  std::vector<std::string> out = briefs(lr.diagnostics);
  if (lr.recipe)
    for (const auto& s : briefs(check_recipe(*lr.recipe))) out.push_back(s);
  return out;
}

inline const char* kHead =
    "base: nvcr.io/nvidia/pytorch:26.08-py3\n"
    "efa: {installer: 1.50.0}\n";

}  // namespace trainimg::recipes::testing
