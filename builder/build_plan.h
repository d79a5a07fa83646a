// SPDX-License-Identifier: GPL-3.0-or-later
// Everything decided before a byte goes to the daemon: lint findings, the
// Dockerfile text and its name in the context, the context directory and its
// .dockerignore, build args, and which source line each build step is.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "builder/builder.h"
#include "builder/context.h"
#include "builder/dockerignore.h"

namespace trainimg::builder {

/// Where build step N comes from.
struct StepSource {
  std::string file;  ///< the Dockerfile, or the recipe that rendered it
  int line = 0, column = 0, length = 0;
  std::string source_line;
  int dockerfile_line = 0;  ///< the instruction's line in the (rendered) Dockerfile
};

struct BuildPlan {
  std::string context_dir;
  DockerIgnore ignore;
  std::vector<ContextFile> injected;  ///< rendered/outside Dockerfile, amended .dockerignore
  std::string dockerfile_name;        ///< context-relative name sent as `dockerfile=`
  std::string dockerfile_display;     ///< what messages call the Dockerfile
  nlohmann::json build_args = nlohmann::json::object();
  /// steps[i] is step i + 1 in the classic builder's numbering: global ARGs
  /// first, then each stage's FROM and instructions. Empty when the
  /// Dockerfile could not be parsed (--no-lint on text trainimg cannot read).
  std::vector<StepSource> steps;

  const StepSource* step(int n) const {
    return n >= 1 && size_t(n) <= steps.size() ? &steps[size_t(n) - 1] : nullptr;
  }
};

/// Reads and lints the input (adding findings to `findings`), renders a
/// recipe, and prepares the context. Throws Error for unreadable input, a
/// bad .dockerignore, a bad --build-arg, a context that is not a directory.
BuildPlan make_plan(const BuildOptions& opt, std::vector<Diagnostic>& findings);

/// "KEY=VALUE" -> {"KEY": "VALUE"}; "KEY" takes the environment's value and
/// is skipped when unset (as docker does). Throws Error for an empty KEY.
nlohmann::json parse_build_args(const std::vector<std::string>& args);

}  // namespace trainimg::builder
