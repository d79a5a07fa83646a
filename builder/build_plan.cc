// SPDX-License-Identifier: GPL-3.0-or-later
#include "builder/build_plan.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "common/error.h"
#include "common/source_file.h"
#include "recipes/recipes.h"

namespace trainimg::builder {
namespace fs = std::filesystem;
namespace {

bool is_recipe(const std::string& path) {
  std::string ext = fs::path(path).extension().string();
  return ext == ".yaml" || ext == ".yml";
}

std::string read_optional(const fs::path& p, bool& found) {
  std::ifstream in(p, std::ios::binary);
  found = bool(in);
  if (!found) return {};
  std::ostringstream s;
  s << in.rdbuf();
  if (in.bad()) throw_errno(p.string(), "cannot read");
  return s.str();
}

// Step numbering of the classic builder: every global ARG, then each stage's
// FROM and instructions, counted across stages.
std::vector<StepSource> dockerfile_steps(const recipes::Dockerfile& df, const SourceFile& f) {
  std::vector<StepSource> out;
  auto add = [&](const recipes::Instruction& in) {
    StepSource s;
    s.file = f.name();
    s.line = s.dockerfile_line = in.line;
    s.column = in.column;
    s.length = int(in.keyword.size());
    s.source_line = std::string(f.line_text(in.line));
    out.push_back(std::move(s));
  };
  for (const auto& a : df.global_args) add(a);
  for (const auto& st : df.stages)
    for (const auto& in : st.instructions) add(in);
  return out;
}

// Re-points each step at the recipe node that rendered its line.
void map_to_recipe(std::vector<StepSource>& steps, const recipes::RenderResult& r) {
  for (auto& s : steps) {
    if (s.dockerfile_line < 1 || size_t(s.dockerfile_line) > r.source_map.size()) continue;
    const auto& m = r.source_map[size_t(s.dockerfile_line) - 1];
    if (m.line <= 0 || m.file.empty()) continue;
    s.file = m.file;
    s.line = m.line;
    s.column = m.column;
    s.length = m.length;
    s.source_line.clear();
    if (!m.file.starts_with("--set")) {
      try {
        s.source_line = std::string(SourceFile::read(m.file).line_text(m.line));
      } catch (const Error&) {
        // The recipe was read a moment ago; without its text the caret is dropped.
      }
    }
  }
}

}  // namespace

nlohmann::json parse_build_args(const std::vector<std::string>& args) {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& a : args) {
    size_t eq = a.find('=');
    std::string key = a.substr(0, eq);
    if (key.empty()) throw Error("--build-arg", "'" + a + "' has no name: write --build-arg KEY=VALUE");
    if (eq != std::string::npos) {
      j[key] = a.substr(eq + 1);
    } else if (const char* v = std::getenv(key.c_str())) {
      j[key] = std::string(v);
    }
  }
  return j;
}

BuildPlan make_plan(const BuildOptions& opt, std::vector<Diagnostic>& findings) {
  BuildPlan plan;
  plan.build_args = parse_build_args(opt.build_args);
  fs::path input(opt.input);
  fs::path ctx = opt.context_dir.empty() ? input.parent_path() : fs::path(opt.context_dir);
  if (ctx.empty()) ctx = ".";
  plan.context_dir = ctx.string();
  std::error_code ec;
  if (!fs::is_directory(ctx, ec))
    throw Error(plan.context_dir, "the build context is not a directory", "pass --context DIR");

  std::string dockerfile_text;
  if (is_recipe(opt.input)) {
    recipes::RenderResult r = recipes::render_recipe_file(opt.input, {});
    for (auto& d : r.diagnostics)
      if (opt.lint || d.severity == Severity::Error) findings.push_back(std::move(d));
    if (r.dockerfile.empty()) return plan;  // errors: reported, nothing to build
    dockerfile_text = r.dockerfile;
    plan.dockerfile_display = opt.input + " (rendered Dockerfile)";
    SourceFile f(plan.dockerfile_display, dockerfile_text);
    plan.steps = dockerfile_steps(recipes::parse_dockerfile(f), f);
    map_to_recipe(plan.steps, r);
  } else {
    SourceFile f = SourceFile::read(opt.input);
    dockerfile_text = f.text();
    plan.dockerfile_display = f.name();
    if (opt.lint) {
      auto df = recipes::parse_dockerfile(f);  // malformed: a positioned Error, exit 2
      for (auto& d : recipes::lint_dockerfile(df, f, recipes::LintOptions{})) findings.push_back(std::move(d));
      plan.steps = dockerfile_steps(df, f);
    } else {
      try {
        plan.steps = dockerfile_steps(recipes::parse_dockerfile(f), f);
      } catch (const Error&) {
        // --no-lint: the daemon is the judge; steps are then reported unmapped.
      }
    }
  }

  bool found = false;
  std::string ignore_text = read_optional(ctx / ".dockerignore", found);
  if (found) plan.ignore = DockerIgnore::parse((ctx / ".dockerignore").string(), ignore_text);

  // A Dockerfile inside the context is sent under its own name; a rendered
  // one, or one outside the context, is added under a content-derived name
  // that the amended .dockerignore hides from COPY (as the docker CLI does).
  fs::path rel;
  if (!is_recipe(opt.input)) rel = fs::weakly_canonical(input, ec).lexically_relative(fs::weakly_canonical(ctx, ec));
  if (!rel.empty() && *rel.begin() != "..") {
    plan.dockerfile_name = rel.generic_string();
    plan.ignore.keep(plan.dockerfile_name);
    plan.ignore.keep(".dockerignore");
  } else {
    plan.dockerfile_name = injected_dockerfile_name(dockerfile_text);
    plan.injected.push_back({plan.dockerfile_name, dockerfile_text});
    if (found && !ignore_text.empty() && ignore_text.back() != '\n') ignore_text += '\n';
    plan.injected.push_back({".dockerignore", ignore_text + plan.dockerfile_name + "\n"});
  }
  return plan;
}

}  // namespace trainimg::builder
