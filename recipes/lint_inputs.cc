// SPDX-License-Identifier: GPL-3.0-or-later
// `trainimg lint FILE|DIR...`: the inputs (directories walked, the config's
// exclude-paths applied before anything is read), each linted as a
// Dockerfile or a recipe, and what no policy may hide (refusals).
#include <filesystem>

#include "common/error.h"
#include "common/policy/policy.h"
#include "recipes/recipes.h"

namespace trainimg::recipes {

namespace {

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
      auto found = dockerfiles_under(a);
      // A directory with nothing to lint is a wrong path, not a clean result.
      if (found.empty())
        throw Error(
            a, "no Dockerfile under this directory",
            "lint walks for Dockerfile, Dockerfile.*, Dockerfile-*, Dockerfile_*, *.Dockerfile, "
            "*.dockerfile, Containerfile and Containerfile.* (hidden directories skipped); name files "
            "directly to lint others");
      for (auto& p : found) out.push_back({std::move(p), true});
    } else {
      out.push_back({a, false});
    }
  }
  return out;
}

// The config's exclude-paths entry that names `path`, as a suppression.
std::optional<Suppressed> excluded(const std::string& path, const policy::Policy& pol) {
  if (path == "-") return std::nullopt;
  for (const auto& [pattern, at] : pol.exclude_paths)
    if (policy::path_matches(pattern, path, pol.root)) {
      Diagnostic d;
      d.severity = Severity::Info;
      d.file = path;
      d.message = "not linted";
      return Suppressed{std::move(d), "exclude-paths", "matches " + pattern, at.location()};
    }
  return std::nullopt;
}

}  // namespace

LintOptions lint_options(const policy::Policy& pol, const std::vector<std::string>& expect,
                         const std::vector<std::string>& ngc_bases,
                         const std::vector<std::string>& contexts) {
  LintOptions opt;
  // The config's values first, so that the flags win. Only efa-installer
  // concerns a Dockerfile; the other `expect:` keys are inspect's.
  for (const auto& [k, v] : pol.expect)
    if (k == "efa-installer") apply_expect(opt, k + "=" + v);
  for (const auto& e : expect) apply_expect(opt, e);
  opt.ngc_bases = ngc_bases.empty() ? pol.ngc_bases : ngc_bases;
  opt.contexts = contexts;
  return opt;
}

void lint_inputs(LintRun& run, const std::vector<std::string>& args, const LintOptions& opt,
                 const policy::Policy& pol, bool keep_refusals) {
  Report& report = run.report;
  report.kind = "lint";
  report.rules = lint_rules();
  bool any_recipe = false;
  for (const auto& [path, walked] : expand_inputs(args)) {
    if (auto s = excluded(path, pol)) {
      run.excluded.push_back(std::move(*s));
      continue;
    }
    std::vector<Diagnostic> found;
    try {
      if (path != "-" && !walked && is_recipe(path)) {
        any_recipe = true;
        found = lint_recipe_file(path, opt);
        run.sources.push_back(std::make_unique<SourceFile>(SourceFile::read(path)));
      } else {
        auto src = std::make_unique<SourceFile>(SourceFile::read(path));
        LintedFile linted = lint_dockerfile_file(*src, opt);
        found = std::move(linted.findings);
        for (const auto& n : linted.notes) report.notes.push_back(n.location() + ": " + n.message);
        run.sources.push_back(std::move(src));
      }
    } catch (const Error& e) {
      if (!walked && !keep_refusals) throw;
      run.refused.push_back(e.diagnostic());
      continue;
    }
    run.by_name[run.sources.back()->name()] = run.sources.back().get();
    report.inputs.push_back(run.sources.back()->name());
    report.findings.insert(report.findings.end(), found.begin(), found.end());
  }
  if (any_recipe) {
    const auto& extra = recipe_rules();
    report.rules.insert(report.rules.end(), extra.begin(), extra.end());
  }
}

void add_refusals(Report& r, const LintRun& run, bool as_findings) {
  r.suppressed.insert(r.suppressed.begin(), run.excluded.begin(), run.excluded.end());
  if (as_findings && !run.refused.empty()) {
    const RuleInfo& syntax = dockerfile_syntax_rule();
    r.rules.push_back(syntax);
    for (Diagnostic d : run.refused) {
      d.rule_id = syntax.id;
      d.severity = Severity::Error;
      d.seed = syntax.seed;
      if (d.hint.empty()) d.hint = syntax.fix;
      r.findings.push_back(std::move(d));
    }
  } else {
    for (const auto& d : run.refused)
      r.notes.push_back(d.location() + ": refused (not a Dockerfile that trainimg can parse): " + d.message);
  }
}

}  // namespace trainimg::recipes
