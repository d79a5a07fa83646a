// SPDX-License-Identifier: GPL-3.0-or-later
#include "recipes/recipe/suppress.h"

#include <algorithm>
#include <string>

#include "recipes/recipe/load.h"

namespace trainimg::recipes {

namespace {

constexpr std::string_view kPragma = "# trainimg: ignore=";

// The ids a pragma on this line names (the line may hold other text before
// the comment).
std::vector<std::string> ignored_on(std::string_view line) {
  std::vector<std::string> ids;
  size_t at = line.find(kPragma);
  if (at == std::string_view::npos) return ids;
  std::string_view list = line.substr(at + kPragma.size());
  size_t end = list.find_first_of(" \t#");
  list = list.substr(0, end);
  size_t start = 0;
  while (start <= list.size()) {
    size_t comma = list.find(',', start);
    std::string id(
        list.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start));
    if (!id.empty()) ids.push_back(id);
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return ids;
}

bool names(const std::vector<std::string>& ids, const std::string& id) {
  return std::find(ids.begin(), ids.end(), id) != ids.end();
}

// Only a line that is nothing but the comment counts as "the line before".
bool comment_only(std::string_view line) {
  size_t p = line.find_first_not_of(" \t");
  return p != std::string_view::npos && line.substr(p).rfind(kPragma, 0) == 0;
}

}  // namespace

void apply_recipe_suppressions(const SourceFile& src, std::vector<Diagnostic>& findings) {
  std::erase_if(findings, [&](const Diagnostic& d) {
    if (d.file != src.name() || d.line < 1 || d.rule_id.empty() || d.rule_id == recipe_schema_rule().id ||
        d.rule_id == recipe_syntax_rule().id)
      return false;
    if (names(ignored_on(src.line_text(d.line)), d.rule_id)) return true;
    if (d.line == 1) return false;
    std::string_view before = src.line_text(d.line - 1);
    return comment_only(before) && names(ignored_on(before), d.rule_id);
  });
}

}  // namespace trainimg::recipes
