// SPDX-License-Identifier: GPL-3.0-or-later
// trainimg render RECIPE.yaml [-o Dockerfile] [--set key=value]...
// Renders a recipe to seed 002's Dockerfile layout. Any error (schema,
// refusal, lint error on the rendered text) is printed with its recipe
// position and exits 2 without writing anything; warnings are printed and
// the Dockerfile is still written.
#include <unistd.h>

#include <iostream>
#include <memory>

#include "cmd/command.h"
#include "common/atomic_file.h"
#include "common/report.h"
#include "recipes/recipes.h"

namespace trainimg::cmd {

void setup_render(CLI::App& sub, Runner& run) {
  auto recipe = std::make_shared<std::string>();
  auto output = std::make_shared<std::string>("-");
  auto sets = std::make_shared<std::vector<std::string>>();
  sub.add_option("recipe", *recipe, "Recipe YAML (docs/recipes.md)")->required();
  sub.add_option("-o,--output", *output,
                 "Write the Dockerfile to this file (atomically) instead of standard output");
  sub.add_option("--set", *sets, "Override a recipe key, e.g. --set efa.installer=1.49.0 (repeatable)")
      ->allow_extra_args(false)
      ->take_all();
  run = [recipe, output, sets] {
    recipes::RenderResult res = recipes::render_recipe_file(*recipe, *sets);
    bool color = want_color(STDERR_FILENO);
    bool failed = false;
    for (const auto& d : res.diagnostics) {
      std::cerr << render_diagnostic(d, color);
      failed |= d.severity == Severity::Error;
    }
    if (failed) return int(kExitUsage);
    write_file_atomic(*output, res.dockerfile);
    return int(kExitOk);
  };
}

}  // namespace trainimg::cmd
