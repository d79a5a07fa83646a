// SPDX-License-Identifier: GPL-3.0-or-later
// Runs every Dockerfile rule over the stages that end in the final image,
// then applies `# trainimg: ignore=ID` pragmas (after the rules, as hadolint).
#include "recipes/lint.h"

#include <algorithm>

#include "common/error.h"
#include "common/version.h"
#include "recipes/rules/rules.h"

namespace trainimg::recipes {

const std::vector<RuleInfo>& lint_rules() {
  static const std::vector<RuleInfo> kInfos = [] {
    std::vector<RuleInfo> v;
    for (const rules::Rule* r : rules::all_rules()) v.push_back(r->info);
    return v;
  }();
  return kInfos;
}

namespace {

bool suppressed(const Diagnostic& d, const Instruction& in) {
  if (d.line < in.line || d.line > in.end_line) return false;
  return std::find(in.ignore.begin(), in.ignore.end(), d.rule_id) != in.ignore.end();
}

}  // namespace

std::vector<Diagnostic> lint_dockerfile(const Dockerfile& df, const SourceFile& f, const LintOptions& opt) {
  std::vector<Diagnostic> out;
  rules::Context c{df, f, opt, {}, false, &out};
  std::vector<const Stage*> chain;
  for (int i = static_cast<int>(df.stages.size()) - 1; i >= 0; i = df.stages[static_cast<size_t>(i)].base_stage)
    chain.push_back(&df.stages[static_cast<size_t>(i)]);
  std::reverse(chain.begin(), chain.end());
  for (const Stage* s : chain)
    for (const auto& in : s->instructions) c.final_image.push_back(&in);
  c.ngc_base = is_ngc_image(df.root_image(df.final_stage()));
  for (const rules::Rule* r : rules::all_rules()) r->check(c);
  std::erase_if(out, [&](const Diagnostic& d) {
    for (const auto& s : df.stages)
      for (const auto& in : s.instructions)
        if (suppressed(d, in)) return true;
    return false;
  });
  sort_diagnostics(out);
  return out;
}

std::vector<Diagnostic> lint_dockerfile(const SourceFile& f, const LintOptions& opt) {
  return lint_dockerfile(parse_dockerfile(f), f, opt);
}

void apply_expect(LintOptions& opt, const std::string& key_value) {
  size_t eq = key_value.find('=');
  std::string key = key_value.substr(0, eq);
  if (eq == std::string::npos || key != "efa-installer")
    throw Error("", "--expect: expected efa-installer=VERSION, got '" + key_value + "'");
  std::string v = key_value.substr(eq + 1);
  if (!looks_like_version(v)) throw Error("", "--expect efa-installer: '" + v + "' is not a version (e.g. 1.50.0)");
  opt.expect_efa_installer = v;
}

}  // namespace trainimg::recipes
