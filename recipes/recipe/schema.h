// SPDX-License-Identifier: GPL-3.0-or-later
// The recipe schema as data: which keys each mapping accepts and what shape
// their values have. The loader checks unknown keys against it (with a "did
// you mean"), and --set walks it to refuse keys the recipe cannot have.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace trainimg::recipes {

enum class FieldKind {
  Scalar,      ///< a string, number or version
  ScalarList,  ///< a list of scalars (apt, efa.flags)
  NameMap,     ///< NAME: scalar pairs (args, labels, env)
  Object,      ///< a mapping with fixed keys (`fields`)
  ObjectList,  ///< a list of such mappings (steps, copy)
  Command,     ///< a string (shell form) or a list of strings (exec form)
};

struct Field {
  std::string_view key;
  FieldKind kind;
  const std::vector<Field>* fields = nullptr;  ///< for Object / ObjectList
};

const std::vector<Field>& recipe_fields();  ///< the top-level mapping
const std::vector<Field>& efa_fields();
const std::vector<Field>& step_fields();
const std::vector<Field>& copy_fields();

/// The field called `key`, or nullptr.
const Field* find_field(const std::vector<Field>& fields, std::string_view key);

/// Levenshtein distance (insert, delete, substitute: 1 each).
int edit_distance(std::string_view a, std::string_view b);

/// The candidate closest to `word` when it is close enough to be a typo
/// (distance <= max(2, size/3)); empty otherwise. Ties go to the first.
std::string suggest(std::string_view word, const std::vector<Field>& fields);

/// " (did you mean 'X'?)" or "".
std::string did_you_mean(std::string_view word, const std::vector<Field>& fields);

}  // namespace trainimg::recipes
