// SPDX-License-Identifier: GPL-3.0-or-later
// The parsed recipe YAML plus the --set overrides spliced into it. Each
// override remembers its subtree, so positions inside it are reported as
// "--set KEY" rather than as a place in the recipe file.
#pragma once

#include <yaml-cpp/yaml.h>

#include <string>
#include <vector>

#include "common/diagnostic.h"
#include "common/source_file.h"

namespace trainimg::recipes {

struct Override {
  std::string label;  ///< "--set efa.installer"
  YAML::Node node;    ///< the spliced value (identity compared with is())
};

struct YamlDoc {
  YAML::Node root;
  std::vector<Override> overrides;
};

/// Splices each "dotted.key=VALUE" (VALUE is YAML) into `doc.root`, walking
/// the schema: unknown keys (with a suggestion), out-of-range indexes and
/// unparsable values become recipe-schema errors at "--set KEY". Throws
/// trainimg::Error when an argument has no '='.
std::vector<Diagnostic> apply_overrides(YamlDoc& doc, const std::vector<std::string>& overrides);

}  // namespace trainimg::recipes
