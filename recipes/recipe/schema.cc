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
      {"name", FieldKind::Scalar},  {"description", FieldKind::Scalar},
      {"env", FieldKind::NameMap},  {"run", FieldKind::Scalar},
      {"shell", FieldKind::Scalar}, {"copy", FieldKind::ObjectList, &copy_fields()},
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
      {"base", FieldKind::Scalar},
      {"platform", FieldKind::Scalar},
      {"efa", FieldKind::Object, &efa_fields()},
      {"apt", FieldKind::ScalarList},
      {"args", FieldKind::NameMap},
      {"steps", FieldKind::ObjectList, &step_fields()},
      {"labels", FieldKind::NameMap},
      {"workdir", FieldKind::Scalar},
      {"entrypoint", FieldKind::Command},
      {"cmd", FieldKind::Command},
  };
  return k;
}

}  // namespace trainimg::recipes
