// SPDX-License-Identifier: GPL-3.0-or-later
// trainimg build RECIPE.yaml|Dockerfile [-t TAG] [--context DIR]
//   [--build-arg K=V]... [--no-cache] [--progress auto|tty|json|none] [--no-lint]
//   [--sqsh OUT.sqsh [--force] [--enroot-defaults]]
#include <unistd.h>

#include <iostream>

#include "builder/builder.h"
#include "cmd/command.h"
#include "common/error.h"
#include "common/report.h"

namespace trainimg::cmd {

void setup_build(CLI::App& sub, Runner& run) {
  auto opt = std::make_shared<builder::BuildOptions>();
  auto progress = std::make_shared<std::string>("auto");
  sub.add_option("input", opt->input, "Recipe (.yaml/.yml) or Dockerfile")->required();
  sub.add_option("-t,--tag", opt->tag, "Name and tag of the image, e.g. train:26.08");
  sub.add_option("--context", opt->context_dir, "Build context directory (default: the input's directory)");
  sub.add_option("--build-arg", opt->build_args,
                 "KEY=VALUE for an ARG (repeatable; KEY alone takes the environment's)");
  sub.add_flag("--no-cache", opt->no_cache, "Do not use the build cache");
  sub.add_option("--progress", *progress, "auto (text), tty (text), json (JSON lines for CI) or none")
      ->check(CLI::IsMember({"auto", "tty", "json", "none"}));
  sub.add_flag(
      "--no-lint", [opt](int64_t) { opt->lint = false; }, "Skip lint (recipe validation errors still stop)");
  auto sqsh = std::make_shared<builder::ImportOptions>();
  sub.add_option("--sqsh", sqsh->output,
                 "Then import the image to OUT.sqsh (as trainimg import) and inspect it");
  sub.add_flag("--force", sqsh->force, "With --sqsh: replace an existing OUT.sqsh atomically");
  sub.add_flag("--enroot-defaults", sqsh->enroot_defaults,
               "With --sqsh: enroot's layout (-comp lzo -noD, 128 KiB)");
  run = [opt, progress, sqsh] {
    if (!sqsh->output.empty()) {
      sqsh->source_date_epoch = builder::source_date_epoch_from_env();
      opt->then_import = *sqsh;
    } else if (sqsh->force || sqsh->enroot_defaults) {
      throw Error("--force/--enroot-defaults", "only with --sqsh OUT.sqsh");
    }
    opt->err_is_tty = ::isatty(STDERR_FILENO);
    opt->progress = *progress == "json"   ? builder::ProgressMode::Json
                    : *progress == "none" ? builder::ProgressMode::None
                                          : builder::ProgressMode::Text;
    opt->color = *progress != "json" && want_color(STDOUT_FILENO);
    // Interrupted: cmd::run_guarded says so and exits 128+N.
    return builder::run_build(*opt, std::cout, std::cerr);
  };
}

}  // namespace trainimg::cmd
