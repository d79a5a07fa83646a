// SPDX-License-Identifier: GPL-3.0-or-later
// The recipe pipeline: load + validate, the rules that need the recipe
// model (checks/), render, lint the rendered Dockerfile and map its
// findings (and their related locations) back onto the recipe. One
// pipeline serves `render` (default lint options) and `lint` (the user's).
#include <filesystem>

#include "common/error.h"
#include "recipes/recipe/checks/checks.h"
#include "recipes/recipe/load.h"
#include "recipes/recipe/render.h"
#include "recipes/recipe/suppress.h"
#include "recipes/recipes.h"

namespace trainimg::recipes {

namespace {

bool is_schema_error(const Diagnostic& d) {
  return d.severity == Severity::Error &&
         (d.rule_id == recipe_schema_rule().id || d.rule_id == recipe_syntax_rule().id);
}

// A stopping failure of the Dockerfile parser on rendered text means the
// recipe's run text is not valid shell/Dockerfile: report it on the recipe.
Diagnostic rendered_parse_error(const Error& e, const std::vector<SourceMapEntry>& map,
                                const std::string& recipe) {
  Diagnostic d = e.diagnostic();
  d.rule_id = recipe_schema_rule().id;
  d.message = "the rendered Dockerfile does not parse: " + d.message;
  d.source_line.clear();
  if (!map_to_recipe(map, d)) {
    d.file = recipe;
    d.line = d.column = d.length = 0;
  }
  return d;
}

RenderResult analyse(const SourceFile& src, const std::vector<std::string>& overrides,
                     const std::string& context_dir, const LintOptions& opt) {
  RenderResult res;
  LoadResult lr = load_recipe(src, overrides, context_dir);
  res.diagnostics = std::move(lr.diagnostics);
  if (!lr.recipe) return res;
  const Recipe& r = *lr.recipe;
  for (auto& d : check_recipe(r)) res.diagnostics.push_back(std::move(d));
  for (auto& d : check_run_text(r)) res.diagnostics.push_back(std::move(d));
  bool schema_ok = true;
  for (const auto& d : res.diagnostics) schema_ok &= !is_schema_error(d);
  if (!schema_ok) {
    apply_recipe_suppressions(src, res.diagnostics);
    return res;
  }

  Rendered rd = render_dockerfile(r);
  res.source_map = rd.map;
  SourceFile rendered(src.name() + " (rendered)", rd.text);
  try {
    for (auto d : lint_dockerfile(rendered, opt)) {
      if (!map_to_recipe(rd.map, d)) {
        d.file = src.name();
        d.line = d.column = d.length = 0;
      }
      for (auto& rel : d.related)
        if (!map_to_recipe(rd.map, rel)) {
          rel.file = src.name();
          rel.line = rel.column = rel.length = 0;
        }
      d.source_line.clear();
      res.diagnostics.push_back(std::move(d));
    }
  } catch (const Error& e) {
    res.diagnostics.push_back(rendered_parse_error(e, rd.map, src.name()));
  }
  apply_recipe_suppressions(src, res.diagnostics);
  bool any_error = false;
  for (const auto& d : res.diagnostics) any_error |= d.severity == Severity::Error;
  if (!any_error) res.dockerfile = std::move(rd.text);
  return res;
}

void finish(RenderResult& res, const SourceFile& src) {
  for (auto& d : res.diagnostics)
    if (d.file == src.name() && d.line > 0 && d.source_line.empty())
      d.source_line = std::string(src.line_text(d.line));
  sort_diagnostics(res.diagnostics);
}

std::string context_of(const std::string& path) {
  std::string dir = std::filesystem::path(path).parent_path().string();
  return dir.empty() ? "." : dir;
}

}  // namespace

RenderResult render_recipe_text(const std::string& name, const std::string& text,
                                const std::vector<std::string>& set_overrides,
                                const std::string& context_dir) {
  SourceFile src(name, text);
  RenderResult res = analyse(src, set_overrides, context_dir, LintOptions{});
  finish(res, src);
  return res;
}

RenderResult render_recipe_file(const std::string& path, const std::vector<std::string>& set_overrides) {
  SourceFile src = SourceFile::read(path);
  RenderResult res = analyse(src, set_overrides, context_of(path), LintOptions{});
  finish(res, src);
  return res;
}

std::vector<Diagnostic> lint_recipe_file(const std::string& path, const LintOptions& opt) {
  SourceFile src = SourceFile::read(path);
  RenderResult res = analyse(src, {}, context_of(path), opt);
  finish(res, src);
  return res.diagnostics;
}

const RuleInfo& recipe_syntax_rule() {
  static const RuleInfo r{"recipe-syntax",
                          Severity::Error,
                          "the file is not well-formed YAML (position from the YAML parser)",
                          "fix the YAML at the reported position",
                          "issue 3: Recipes → Dockerfile",
                          "recipe",
                          "docs/recipes.md#refusals-and-checks"};
  return r;
}

const RuleInfo& recipe_schema_rule() {
  static const RuleInfo r{
      "recipe-schema",
      Severity::Error,
      "unknown key (with \"did you mean\"), duplicate key, wrong type, missing "
      "`base`/`efa`/`efa.installer`, `efa.installer` not a pinned version, bad "
      "package/ARG/ENV/label/step name, duplicate step, copy source outside or missing from the "
      "context, bad `efa.mirror`/`platform`/`workdir`/`shell`, a `#` comment at the end of a `run` "
      "line, run text the Dockerfile parser cannot read, a bad `--set` key; warning for a step that "
      "renders nothing",
      "follow docs/recipes.md; the message names the key and what it expects",
      "issue 3: Recipes → Dockerfile",
      "recipe",
      "docs/recipes.md#refusals-and-checks"};
  return r;
}

const std::vector<RuleInfo>& recipe_rules() {
  static const std::vector<RuleInfo> k = [] {
    std::vector<RuleInfo> v = {recipe_syntax_rule(), recipe_schema_rule()};
    for (const auto* c : all_checks()) v.push_back(c->info);
    return v;
  }();
  return k;
}

}  // namespace trainimg::recipes
