// SPDX-License-Identifier: GPL-3.0-or-later
// YAML read with positions, and the key tables that check a mapping's keys
// (with "did you mean" suggestions): what the recipe loader and the policy
// config (.trainimg.yaml) share.
#pragma once

#include <yaml-cpp/yaml.h>

#include <string>
#include <string_view>
#include <vector>

#include "common/source_file.h"

namespace trainimg {

/// Parses `src` as YAML. Throws trainimg::Error with the parser's line and
/// column when it is not YAML, under rule `rule_id` (empty: none).
YAML::Node parse_yaml(const SourceFile& src, std::string_view rule_id = {});

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

/// The field called `key`, or nullptr.
const Field* find_field(const std::vector<Field>& fields, std::string_view key);

/// Levenshtein distance (insert, delete, substitute: 1 each).
int edit_distance(std::string_view a, std::string_view b);

/// The candidate closest to `word` when it is close enough to be a typo
/// (distance <= max(2, size/3)); empty otherwise. Ties go to the first.
std::string suggest(std::string_view word, const std::vector<Field>& fields);

/// " (did you mean 'X'?)" or "".
std::string did_you_mean(std::string_view word, const std::vector<Field>& fields);

}  // namespace trainimg
