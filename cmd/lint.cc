// SPDX-License-Identifier: GPL-3.0-or-later
// trainimg lint FILE|DIR... [--format text|json|sarif|junit] [--fail-on error|warning|never] [-o REPORT]
//                           [--expect efa-installer=VERSION] [--ngc-base PREFIX]... [--context DIR]...
//                           [--config FILE|--no-config] [--baseline FILE|--write-baseline FILE]
//                           [--show-suppressed]
// Dockerfiles ("-" = standard input) are parsed and linted; *.yaml/*.yml
// recipes are validated, rendered and linted with positions in the recipe.
// Every input named on the command line is read and checked before anything
// is printed, so a malformed one (exit 2) leaves no partial report; a file
// found by walking a directory that is refused is reported on stderr (exit 2)
// while the others are still linted and reported. A structured report (JSON,
// SARIF, JUnit) is always printed, for the CI that reads it: every refused
// input is in it as an error finding of `dockerfile-syntax` (exit 2 still).
#include "recipes/lint.h"

#include <unistd.h>

#include <filesystem>
#include <iostream>
#include <map>
#include <memory>

#include "cmd/command.h"
#include "common/error.h"
#include "common/report.h"
#include "common/source_file.h"
#include "recipes/recipe.h"

namespace trainimg::cmd {
namespace {

struct LintFlags {
  std::vector<std::string> files;
  std::vector<std::string> expect;
  std::vector<std::string> ngc_bases;
  std::vector<std::string> contexts;
};

bool is_recipe(const std::string& path) {
  auto ends = [&](const std::string& s) {
    return path.size() > s.size() && path.compare(path.size() - s.size(), s.size(), s) == 0;
  };
  return ends(".yaml") || ends(".yml");
}

// One input: a path named on the command line, or a file found by walking a
// directory named there (`walked`: a refusal does not stop the others).
struct Input {
  std::string path;
  bool walked = false;
};

std::vector<Input> expand_inputs(const std::vector<std::string>& args) {
  std::vector<Input> out;
  for (const auto& a : args) {
    std::error_code ec;
    if (a != "-" && std::filesystem::is_directory(a, ec)) {
      for (auto& p : recipes::dockerfiles_under(a)) out.push_back({std::move(p), true});
    } else {
      out.push_back({a, false});
    }
  }
  return out;
}

int run_lint(const LintFlags& fl, const ReportFlags& rf) {
  bool structured = rf.format != "text";
  std::vector<std::unique_ptr<SourceFile>> sources;
  std::map<std::string, const SourceFile*> by_name;
  std::vector<Diagnostic> refused;  // files of a walked directory that are not Dockerfiles
  int rc = run_check(rf, [&](const policy::Policy& pol) {
    recipes::LintOptions opt;
    // The config's values first, so that the flags win. Only efa-installer
    // concerns a Dockerfile; the other `expect:` keys are inspect's.
    for (const auto& [k, v] : pol.expect)
      if (k == "efa-installer") recipes::apply_expect(opt, k + "=" + v);
    for (const auto& e : fl.expect) recipes::apply_expect(opt, e);

    Report report;
    report.kind = "lint";
    report.rules = recipes::lint_rules();
    opt.ngc_bases = fl.ngc_bases.empty() ? pol.ngc_bases : fl.ngc_bases;
    opt.contexts = fl.contexts;
    bool any_recipe = false;
    std::vector<Suppressed> excluded;  // inputs the config's exclude-paths names: not even read
    for (const auto& [path, walked] : expand_inputs(fl.files)) {
      std::vector<Diagnostic> found;
      bool skip = false;
      for (const auto& [pattern, at] : pol.exclude_paths)
        if (!skip && path != "-" && policy::path_matches(pattern, path, pol.root)) {
          Diagnostic d;
          d.severity = Severity::Info;
          d.file = path;
          d.message = "not linted";
          excluded.push_back({std::move(d), "exclude-paths", "matches " + pattern, at.location()});
          skip = true;
        }
      if (skip) continue;
      try {
        if (path != "-" && !walked && is_recipe(path)) {
          any_recipe = true;
          found = recipes::lint_recipe_file(path, opt);
          sources.push_back(std::make_unique<SourceFile>(SourceFile::read(path)));
        } else {
          auto src = std::make_unique<SourceFile>(SourceFile::read(path));
          recipes::LintedFile linted = recipes::lint_dockerfile_file(*src, opt);
          found = std::move(linted.findings);
          for (const auto& n : linted.notes) report.notes.push_back(n.location() + ": " + n.message);
          sources.push_back(std::move(src));
        }
      } catch (const Error& e) {
        if (!walked && !structured) throw;
        refused.push_back(e.diagnostic());
        continue;
      }
      by_name[sources.back()->name()] = sources.back().get();
      report.inputs.push_back(sources.back()->name());
      report.findings.insert(report.findings.end(), found.begin(), found.end());
    }
    if (any_recipe) {
      const auto& extra = recipes::recipe_rules();
      report.rules.insert(report.rules.end(), extra.begin(), extra.end());
    }
    auto out = std::make_unique<Checked>(std::move(report));
    out->sources = &by_name;
    out->after_policy = [&refused, excluded, structured](Report& r) {
      r.suppressed.insert(r.suppressed.begin(), excluded.begin(), excluded.end());
      if (structured && !refused.empty()) {
        // After the policy: a refusal is never suppressed or baselined.
        const RuleInfo& syntax = recipes::dockerfile_syntax_rule();
        r.rules.push_back(syntax);
        for (Diagnostic d : refused) {
          d.rule_id = syntax.id;
          d.severity = Severity::Error;
          d.seed = syntax.seed;
          if (d.hint.empty()) d.hint = syntax.fix;
          r.findings.push_back(std::move(d));
        }
      } else {
        for (const auto& d : refused)
          r.notes.push_back(d.location() +
                            ": refused (not a Dockerfile that trainimg can parse): " + d.message);
      }
    };
    return out;
  });
  for (const auto& d : refused) std::cerr << render_diagnostic(d, want_color(STDERR_FILENO));
  return refused.empty() ? rc : int(kExitUsage);
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
