// SPDX-License-Identifier: GPL-3.0-or-later
// trainimg build RECIPE.yaml|Dockerfile [-t TAG] [--context DIR]
//   [--build-arg K=V]... [--no-cache] [--progress auto|tty|json|none] [--no-lint]
#include <unistd.h>

#include <iostream>

#include "builder/builder.h"
#include "cmd/command.h"
#include "common/report.h"

namespace trainimg::cmd {

void setup_build(CLI::App& sub, Runner& run) {
  auto opt = std::make_shared<builder::BuildOptions>();
  auto progress = std::make_shared<std::string>("auto");
  sub.add_option("input", opt->input, "Recipe (.yaml/.yml) or Dockerfile")->required();
  sub.add_option("-t,--tag", opt->tag, "Name and tag of the image, e.g. train:26.08");
  sub.add_option("--context", opt->context_dir, "Build context directory (default: the input's directory)");
  sub.add_option("--build-arg", opt->build_args, "KEY=VALUE for an ARG (repeatable; KEY alone takes the environment's)");
  sub.add_flag("--no-cache", opt->no_cache, "Do not use the build cache");
  sub.add_option("--progress", *progress, "auto (text), tty (text), json (JSON lines for CI) or none")
      ->check(CLI::IsMember({"auto", "tty", "json", "none"}));
  sub.add_flag("--no-lint", [opt](int64_t) { opt->lint = false; }, "Skip lint (recipe validation errors still stop)");
  run = [opt, progress] {
    opt->progress = *progress == "json"   ? builder::ProgressMode::Json
                    : *progress == "none" ? builder::ProgressMode::None
                                          : builder::ProgressMode::Text;
    opt->color = *progress != "json" && want_color(STDOUT_FILENO);
    return builder::run_build(*opt, std::cout, std::cerr);
  };
}

}  // namespace trainimg::cmd
