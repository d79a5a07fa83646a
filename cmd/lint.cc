// SPDX-License-Identifier: GPL-3.0-or-later
// trainimg lint FILE|DIR... [--expect efa-installer=VERSION] [--ngc-base PREFIX]... [--context DIR]...
//   [--format …] [--fail-on …] [-o REPORT] [policy flags]: recipes::lint_inputs, then the report path.
// A refused input stops all (exit 2, nothing printed) unless found by walking a directory or the report
// is structured (an error finding of dockerfile-syntax); exit 2 still, its error on stderr.
#include <unistd.h>

#include <iostream>

#include "cmd/command.h"
#include "recipes/recipes.h"

namespace trainimg::cmd {

namespace {

struct LintFlags {
  std::vector<std::string> files, expect, ngc_bases, contexts;
};

int run_lint(const LintFlags& fl, const ReportFlags& rf) {
  bool structured = rf.format != "text";
  recipes::LintRun lint;
  int rc = run_check(rf, [&](const policy::Policy& pol) {
    recipes::lint_inputs(lint, fl.files, recipes::lint_options(pol, fl.expect, fl.ngc_bases, fl.contexts),
                         pol, structured);
    auto out = std::make_unique<Checked>(std::move(lint.report));
    out->sources = &lint.by_name;
    // After the policy: a refusal is never suppressed or baselined.
    out->after_policy = [&lint, structured](Report& r) { recipes::add_refusals(r, lint, structured); };
    return out;
  });
  for (const auto& d : lint.refused) std::cerr << render_diagnostic(d, want_color(STDERR_FILENO));
  return lint.refused.empty() ? rc : int(kExitUsage);
}

}  // namespace

void setup_lint(CLI::App& sub, Runner& run) {
  auto fl = std::make_shared<LintFlags>();
  sub.add_option("files", fl->files,
                 "Dockerfiles ('-' = standard input), recipes (*.yaml, *.yml), or directories (walked for "
                 "Dockerfile, Dockerfile.*, *.Dockerfile, *.dockerfile; hidden directories skipped)")
      ->required();
  sub.add_option(
         "--ngc-base", fl->ngc_bases,
         "an image prefix built on NGC's PyTorch container (it carries NGC's Open MPI in /usr/local/mpi); "
         "repeatable, e.g. --ngc-base 123456789012.dkr.ecr.us-east-1.amazonaws.com/pytorch-ngc")
      ->allow_extra_args(false)
      ->type_size(1)
      ->expected(1, 1);
  sub.add_option("--context", fl->contexts,
                 "a build context directory: where a custom frontend's INCLUDE+ FILE is looked up after the "
                 "Dockerfile's own directory; repeatable")
      ->allow_extra_args(false)
      ->type_size(1)
      ->expected(1, 1);
  // One value per --expect, so `--expect efa-installer=1.50.0 Dockerfile` leaves the file positional.
  sub.add_option(
         "--expect", fl->expect,
         "the host's versions, e.g. efa-installer=1.50.0 (efa-version-pin errors when the image differs)")
      ->allow_extra_args(false)
      ->type_size(1)
      ->expected(1, 1);
  auto rf = std::make_shared<ReportFlags>();
  ReportFlagSet set;
  set.formats = "text, json (schema trainimg.lint/v1), sarif (2.1.0) or junit";
  add_report_flags(sub, rf, set);
  sub.footer(
      "Exit codes: 0 no finding at or above --fail-on, 1 findings, 2 usage or unreadable/malformed input\n"
      "(in a walked directory: the other files are still linted and reported).\n"
      "Suppress one finding with '# trainimg: ignore=RULE-ID[,RULE-ID]' on the line before the instruction;\n"
      "rules, severities, paths and dated ignores for a whole repository: .trainimg.yaml (docs/policy.md).");
  run = [fl, rf] { return run_lint(*fl, *rf); };
}

}  // namespace trainimg::cmd
