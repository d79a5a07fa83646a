// SPDX-License-Identifier: GPL-3.0-or-later
#include "recipes/recipe/schema.h"

#include <algorithm>

namespace trainimg::recipes {

const std::vector<Field>& copy_fields() {
  static const std::vector<Field> k = {{"src", FieldKind::Scalar}, {"dst", FieldKind::Scalar}};
  return k;
}

const std::vector<Field>& step_fields() {
  static const std::vector<Field> k = {
      {"name", FieldKind::Scalar},        {"description", FieldKind::Scalar},
      {"env", FieldKind::NameMap},        {"run", FieldKind::Scalar},
      {"shell", FieldKind::Scalar},       {"copy", FieldKind::ObjectList, &copy_fields()},
  };
  return k;
}

const std::vector<Field>& efa_fields() {
  static const std::vector<Field> k = {
      {"installer", FieldKind::Scalar}, {"flags", FieldKind::ScalarList}, {"mirror", FieldKind::Scalar}};
  return k;
}

const std::vector<Field>& recipe_fields() {
  static const std::vector<Field> k = {
      {"base", FieldKind::Scalar},         {"platform", FieldKind::Scalar},
      {"efa", FieldKind::Object, &efa_fields()},
      {"apt", FieldKind::ScalarList},      {"args", FieldKind::NameMap},
      {"steps", FieldKind::ObjectList, &step_fields()},
      {"labels", FieldKind::NameMap},      {"workdir", FieldKind::Scalar},
      {"entrypoint", FieldKind::Command},  {"cmd", FieldKind::Command},
  };
  return k;
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

}  // namespace trainimg::recipes
