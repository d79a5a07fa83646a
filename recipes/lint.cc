// SPDX-License-Identifier: GPL-3.0-or-later
// Runs every Dockerfile rule over the stages that end in the final image,
// then applies `# trainimg: ignore=ID` pragmas (after the rules, as hadolint).
#include <algorithm>
#include <array>
#include <filesystem>

#include "common/error.h"
#include "common/version.h"
#include "recipes/dockerfile/dockerfile.h"
#include "recipes/recipes.h"
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

const RuleInfo& dockerfile_syntax_rule() {
  static const RuleInfo r{
      "dockerfile-syntax",
      Severity::Error,
      "the input is refused as a Dockerfile (malformed: the parser's positioned error); "
      "in JSON, SARIF and JUnit reports only, text prints it on stderr; the exit code is 2",
      "fix the Dockerfile at the reported position",
      "issue 25: a refused file in a structured report",
      "dockerfile",
      "docs/lint.md#what-is-parsed-no-substring-matching"};
  return r;
}

namespace {

bool suppressed(const Diagnostic& d, const Instruction& in) {
  if (d.line < in.line || d.line > in.end_line) return false;
  return std::find(in.ignore.begin(), in.ignore.end(), d.rule_id) != in.ignore.end();
}

}  // namespace

std::vector<Diagnostic> lint_dockerfile(const Dockerfile& df, const SourceFile& f, const LintOptions& opt) {
  std::vector<Diagnostic> out;
  rules::Context c{df, f, opt, {}, false, &out, {}};
  std::vector<const Stage*> chain;
  for (int i = static_cast<int>(df.stages.size()) - 1; i >= 0;
       i = df.stages[static_cast<size_t>(i)].base_stage)
    chain.push_back(&df.stages[static_cast<size_t>(i)]);
  std::reverse(chain.begin(), chain.end());
  for (const Stage* s : chain)
    for (const auto& in : s->instructions) c.final_image.push_back(&in);
  c.base = classify_base(df.root_image(df.final_stage()), opt);
  c.ngc_base = c.base.ngc;
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

LintedFile lint_dockerfile_file(const SourceFile& f, const LintOptions& opt) {
  std::vector<std::string> roots = {std::filesystem::path(f.name()).parent_path().string()};
  roots.insert(roots.end(), opt.contexts.begin(), opt.contexts.end());
  Inlined in = inline_includes(f, roots);
  Dockerfile df;
  try {
    df = parse_dockerfile(in.text);
  } catch (const Error& e) {
    Diagnostic d = e.diagnostic();
    map_back(d, in);
    throw Error(std::move(d));
  }
  LintedFile out;
  out.findings = lint_dockerfile(df, in.text, opt);
  // An INCLUDE+ not read has its own remark instead of "unknown instruction".
  for (auto& n : df.notes)
    if (std::none_of(in.notes.begin(), in.notes.end(),
                     [&](const Diagnostic& u) { return u.line == n.line && u.column == n.column; }))
      out.notes.push_back(std::move(n));
  out.notes.insert(out.notes.end(), in.notes.begin(), in.notes.end());
  for (auto* list : {&out.findings, &out.notes}) {
    for (auto& d : *list) map_back(d, in);
    sort_diagnostics(*list);
  }
  return out;
}

NgcBase classify_base(const std::string& image, const LintOptions& opt) {
  std::string img = image;
  for (auto& ch : img) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  for (std::string p : opt.ngc_bases) {
    for (auto& ch : p) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    if (!p.empty() && img.rfind(p, 0) == 0) return {true, NgcMpi::UsrLocalMpi};
  }
  // NeMo framework early-access images, built on the PyTorch container.
  if (img.rfind("nvcr.io/ea-bignlp/", 0) == 0) return {true, NgcMpi::UsrLocalMpi};
  const std::string kNgc = "nvcr.io/nvidia/";
  if (img.rfind(kNgc, 0) != 0) return {};
  std::string repo = img.substr(kNgc.size());
  repo = repo.substr(0, repo.find_first_of(":@"));
  // The CUDA images carry no MPI (and no NGC EFA stack).
  if (repo == "cuda" || repo.rfind("cuda/", 0) == 0) return {};
  // The PyTorch container and the framework images built on it.
  static const std::array<std::string_view, 9> kPyTorchFamily = {"pytorch",
                                                                 "nemo",
                                                                 "tensorflow",
                                                                 "pyg",
                                                                 "dgl",
                                                                 "clara/bionemo-framework",
                                                                 "tensorrt-llm/release",
                                                                 "nemo-rl",
                                                                 "nemo-framework"};
  for (auto f : kPyTorchFamily)
    if (repo == f) return {true, NgcMpi::UsrLocalMpi};
  // HPC images carry HPC-X's Open MPI under /opt/hpcx; so does the CUDA
  // deep-learning base the framework images are built on (public EFA samples
  // on it: aws-do-eks nccl-tests Dockerfile.public builds nccl-tests with
  // MPI_HOME=/opt/hpcx/ompi, awsome-inference Dockerfile.efa works around
  // "HPC-X at /opt/hpcx with incompatible MCA modules").
  if (repo == "hpc-benchmarks" || repo == "cuda-dl-base") return {true, NgcMpi::Hpcx};
  return {true, NgcMpi::None};  // another NGC image: where its MPI is is not known
}

namespace {

bool dockerfile_name(const std::string& n) {
  auto ends = [&](std::string_view s) {
    return n.size() > s.size() && n.compare(n.size() - s.size(), s.size(), s) == 0;
  };
  // BuildKit's per-Dockerfile ignore file (`Dockerfile.dockerignore`,
  // `x.Dockerfile.dockerignore`) and documents named after a Dockerfile are
  // not Dockerfiles.
  for (std::string_view not_one : {".dockerignore", ".md", ".rst", ".txt"})
    if (ends(not_one)) return false;
  auto starts = [&](std::string_view s) { return n.size() > s.size() && n.compare(0, s.size(), s) == 0; };
  return n == "Dockerfile" || n == "Containerfile" || starts("Dockerfile.") || starts("Dockerfile-") ||
         starts("Dockerfile_") || starts("Containerfile.") || ends(".Dockerfile") || ends(".dockerfile");
}

}  // namespace

bool is_dockerfile_name(const std::string& name) {
  return dockerfile_name(name);
}

std::vector<std::string> dockerfiles_under(const std::string& dir) {
  namespace fs = std::filesystem;
  std::vector<std::string> out;
  std::error_code ec;
  fs::recursive_directory_iterator it(dir, fs::directory_options::skip_permission_denied, ec), end;
  if (ec) throw Error(dir, "cannot read directory: " + ec.message());
  for (; it != end; it.increment(ec)) {
    if (ec) throw Error(dir, "cannot read directory: " + ec.message());
    const fs::directory_entry& e = *it;
    std::string name = e.path().filename().string();
    std::error_code ec2;
    if (e.is_directory(ec2)) {
      if ((!name.empty() && name[0] == '.') || e.is_symlink(ec2)) it.disable_recursion_pending();
      continue;
    }
    if (dockerfile_name(name) && e.is_regular_file(ec2)) out.push_back(e.path().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

void apply_expect(LintOptions& opt, const std::string& key_value) {
  size_t eq = key_value.find('=');
  std::string key = key_value.substr(0, eq);
  if (eq == std::string::npos || key != "efa-installer")
    throw Error("", "--expect: expected efa-installer=VERSION, got '" + key_value + "'");
  std::string v = key_value.substr(eq + 1);
  if (!looks_like_version(v))
    throw Error("", "--expect efa-installer: '" + v + "' is not a version (e.g. 1.50.0)");
  opt.expect_efa_installer = v;
}

}  // namespace trainimg::recipes
