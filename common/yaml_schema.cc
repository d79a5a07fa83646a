// SPDX-License-Identifier: GPL-3.0-or-later
#include "common/yaml_schema.h"

#include <algorithm>

#include "common/error.h"

namespace trainimg {

YAML::Node parse_yaml(const SourceFile& src, std::string_view rule_id) {
  try {
    return YAML::Load(src.text());
  } catch (const YAML::Exception& e) {
    Diagnostic d;
    d.rule_id = std::string(rule_id);
    d.file = src.name();
    d.message = "malformed YAML: " + e.msg;
    d.hint = "fix the YAML syntax at this position (indentation, an unclosed bracket or quote)";
    if (!e.mark.is_null()) {
      d.line = e.mark.line + 1;
      d.column = e.mark.column + 1;
      d.length = 1;
      d.source_line = std::string(src.line_text(d.line));
    }
    throw Error(d);
  }
}

const Field* find_field(const std::vector<Field>& fields, std::string_view key) {
  for (const auto& f : fields)
    if (f.key == key) return &f;
  return nullptr;
}

int edit_distance(std::string_view a, std::string_view b) {
  std::vector<int> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = static_cast<int>(j);
  for (size_t i = 1; i <= a.size(); ++i) {
    int diag = row[0];
    row[0] = static_cast<int>(i);
    for (size_t j = 1; j <= b.size(); ++j) {
      int up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}

std::string suggest(std::string_view word, const std::vector<Field>& fields) {
  int limit = std::max(2, static_cast<int>(word.size()) / 3);
  std::string best;
  int best_d = limit + 1;
  for (const auto& f : fields) {
    int d = edit_distance(word, f.key);
    if (d < best_d) {
      best_d = d;
      best = std::string(f.key);
    }
  }
  return best;
}

std::string did_you_mean(std::string_view word, const std::vector<Field>& fields) {
  std::string s = suggest(word, fields);
  return s.empty() ? std::string() : " (did you mean '" + s + "'?)";
}

}  // namespace trainimg
