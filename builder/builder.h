// SPDX-License-Identifier: GPL-3.0-or-later
// Public header of the builder library, build half: `trainimg build` through
// the Docker Engine API (inspect/engine), lint first, the context streamed
// (builder/context.h), progress parsed (builder/progress.h), and a failing
// step mapped back to its Dockerfile line (and recipe line).
#pragma once

#include <functional>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "builder/import/import.h"  // the import half: trainimg import (pyxis-importer: builder/pyxis/pyxis.h)
#include "common/diagnostic.h"

namespace trainimg::builder {

enum class ProgressMode {
  Text,  ///< "step N/M: INSTRUCTION" and the build output, for people
  Json,  ///< one JSON object a line (schema trainimg.build-progress/v1), for CI
  None,  ///< nothing but the result line and errors
};

struct BuildOptions {
  std::string input;        ///< RECIPE.yaml/.yml, or a Dockerfile
  std::string context_dir;  ///< empty: the input's directory
  std::string tag;          ///< -t; empty: untagged
  std::vector<std::string>
      build_args;  ///< "KEY=VALUE", or "KEY" (value from the environment, skipped if unset)
  bool no_cache = false;
  bool lint = true;  ///< false: --no-lint (a recipe's validation errors still stop it)
  ProgressMode progress = ProgressMode::Text;
  bool color = false;
  bool err_is_tty = false;  ///< the import's progress line (Text mode) only on a terminal
  /// --sqsh OUT.sqsh: after a successful build, import the image (by its id)
  /// with these options (output set; source filled in by run_build), then
  /// print the inspection of the published .sqsh: the mission in one command.
  std::optional<ImportOptions> then_import;
};

struct BuildResult {
  std::string image_id;              ///< "sha256:…" on success
  std::vector<Diagnostic> findings;  ///< lint findings (errors among them stopped the build)
  bool lint_failed = false;          ///< lint errors: nothing was sent to the daemon
  /// The failing step: positioned at its Dockerfile line, or at the recipe
  /// line that produced it; rule_id/hint set when its output matched a
  /// documented failure text (builder/failure_hints.h).
  std::optional<Diagnostic> failure;
  int steps = 0;  ///< steps the daemon announced
};

/// Called once with the lint findings, before anything is sent.
using FindingsHandler = std::function<void(const std::vector<Diagnostic>&)>;

/// Lints, renders (recipes), streams the context and builds with
/// networkmode=host. Progress goes to `progress` in opt.progress form.
/// Throws trainimg::Error for stopping failures: unreadable input or
/// context, a bad --build-arg, an unreachable daemon, a lost connection.
BuildResult build(const BuildOptions& opt, std::ostream& progress, const FindingsHandler& on_findings = {});

/// `trainimg build`: build() with lint findings and a failure rendered on
/// `err` (text) or as JSON events on `out`, the image id printed on `out`.
/// With then_import, the image is imported and the inspection report
/// printed on `out` (text) or as "imported"/"inspect" events (JSON).
/// Returns 0 (built, and no error finding in the image), 1 (lint errors, a
/// failed step, or error findings in the imported image); throws as build()
/// and import_image() (Interrupted for signals during the import).
int run_build(const BuildOptions& opt, std::ostream& out, std::ostream& err);

}  // namespace trainimg::builder
