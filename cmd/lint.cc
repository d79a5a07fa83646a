// SPDX-License-Identifier: GPL-3.0-or-later
// trainimg lint FILE... [--format text|json|sarif|junit] [--fail-on error|warning|never]
//                       [--expect efa-installer=VERSION]
// Dockerfiles ("-" = standard input) are parsed and linted; *.yaml/*.yml
// recipes are validated, rendered and linted with positions in the recipe.
// Every input is read and checked before anything is printed, so a
// malformed one (exit 2) leaves no partial report.
#include <unistd.h>

#include <iostream>
#include <map>
#include <memory>

#include "cmd/command.h"
#include "common/report.h"
#include "common/source_file.h"
#include "recipes/lint.h"
#include "recipes/recipe.h"

namespace trainimg::cmd {
namespace {

struct LintFlags {
  std::vector<std::string> files;
  std::string format = "text";
  std::string fail_on = "error";
  std::vector<std::string> expect;
};

bool is_recipe(const std::string& path) {
  auto ends = [&](const std::string& s) {
    return path.size() > s.size() && path.compare(path.size() - s.size(), s.size(), s) == 0;
  };
  return ends(".yaml") || ends(".yml");
}

int run_lint(const LintFlags& fl) {
  Format format = parse_format(fl.format);
  FailOn fail_on = parse_fail_on(fl.fail_on);
  recipes::LintOptions opt;
  for (const auto& e : fl.expect) recipes::apply_expect(opt, e);

  Report report;
  report.kind = "lint";
  report.rules = recipes::lint_rules();
  std::vector<std::unique_ptr<SourceFile>> sources;
  std::map<std::string, const SourceFile*> by_name;
  bool any_recipe = false;
  for (const auto& path : fl.files) {
    std::vector<Diagnostic> found;
    if (path != "-" && is_recipe(path)) {
      any_recipe = true;
      found = recipes::lint_recipe_file(path, opt);
      sources.push_back(std::make_unique<SourceFile>(SourceFile::read(path)));
    } else {
      sources.push_back(std::make_unique<SourceFile>(SourceFile::read(path)));
      found = recipes::lint_dockerfile(*sources.back(), opt);
    }
    by_name[sources.back()->name()] = sources.back().get();
    report.inputs.push_back(sources.back()->name());
    report.findings.insert(report.findings.end(), found.begin(), found.end());
  }
  if (any_recipe) {
    const auto& extra = recipes::recipe_rules();
    report.rules.insert(report.rules.end(), extra.begin(), extra.end());
  }
  TextOptions topt;
  topt.color = want_color(STDOUT_FILENO);
  topt.sources = &by_name;
  std::cout << render(report, format, topt);
  std::cout.flush();
  return exit_code(report, fail_on);
}

}  // namespace

void setup_lint(CLI::App& sub, Runner& run) {
  auto fl = std::make_shared<LintFlags>();
  sub.add_option("files", fl->files, "Dockerfiles ('-' = standard input) or recipes (*.yaml, *.yml)")->required();
  sub.add_option("--format", fl->format, "text, json (schema trainimg.lint/v1), sarif (2.1.0) or junit")
      ->check(CLI::IsMember({"text", "json", "sarif", "junit"}));
  sub.add_option("--fail-on", fl->fail_on, "exit 1 when a finding is at or above: error (default), warning, never")
      ->check(CLI::IsMember({"error", "warning", "never"}));
  // One value per --expect, so `--expect efa-installer=1.50.0 Dockerfile` leaves the file positional.
  sub.add_option("--expect", fl->expect, "the host's versions, e.g. efa-installer=1.50.0 (efa-version-pin errors when the image differs)")
      ->allow_extra_args(false)
      ->type_size(1)
      ->expected(1, 1);
  sub.footer(
      "Exit codes: 0 no finding at or above --fail-on, 1 findings, 2 usage or unreadable/malformed input.\n"
      "Suppress one finding with '# trainimg: ignore=RULE-ID[,RULE-ID]' on the line before the instruction.");
  run = [fl] { return run_lint(*fl); };
}

}  // namespace trainimg::cmd
