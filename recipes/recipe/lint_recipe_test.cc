// SPDX-License-Identifier: GPL-3.0-or-later
// The whole recipe pipeline: render + lint of the rendered Dockerfile with
// findings mapped back onto the recipe, and the seed equivalence.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "common/error.h"
#include "recipes/dockerfile/dockerfile.h"
#include "recipes/recipe/test_support.h"
#include "recipes/recipes.h"

namespace trainimg::recipes {
namespace {

using testing::briefs;
using ::testing::ElementsAre;
using ::testing::IsEmpty;
using testing::kHead;

const std::string kSource = TRAINIMG_SOURCE_DIR;

RenderResult render(const std::string& text, const std::vector<std::string>& overrides = {}) {
  return render_recipe_text("recipe.yaml", text, overrides, kSource + "/examples");
}

std::string read(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string squeeze(const std::string& s) {
  std::string out;
  for (char c : s) {
    bool blank = c == ' ' || c == '\t' || c == '\n';
    if (blank && (out.empty() || out.back() == ' ')) continue;
    out += blank ? ' ' : c;
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

// An instruction as the parser sees it: keyword, whitespace-normalised
// arguments, and for RUN each command's operator and words.
std::string shape(const Instruction& in) {
  std::string s = in.keyword + " " + squeeze(in.raw_args);
  for (const auto& c : in.script.commands) {
    s += "\n  " + std::string(to_string(c.op)) + ":";
    for (const auto& w : c.assignments) s += " " + w.text;
    for (const auto& w : c.argv) s += " " + w.text;
  }
  return s;
}

std::vector<std::string> shapes(const std::string& name, const std::string& text) {
  Dockerfile df = parse_dockerfile(SourceFile(name, text));
  std::vector<std::string> out;
  for (const auto& in : df.global_args) out.push_back(shape(in));
  for (const auto& st : df.stages)
    for (const auto& in : st.instructions) out.push_back(shape(in));
  return out;
}

TEST(RecipeSeedEquivalence, ReferenceRecipeRendersTheSeedsReferenceDockerfile) {
  RenderResult r = render_recipe_file(kSource + "/examples/reference.yaml", {});
  ASSERT_THAT(briefs(r.diagnostics), IsEmpty());
  std::vector<std::string> got = shapes("rendered", r.dockerfile);
  std::vector<std::string> want =
      shapes("seed", read(kSource + "/tests/fixtures/seed002/reference.Dockerfile"));
  ASSERT_EQ(want.size(), 7u);
  ASSERT_GE(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) EXPECT_EQ(got[i], want[i]) << "instruction " << i + 1;
  // The seed ends with "# 3. Add your user training code … below this";
  // the reference recipe's stage 3 is exactly that.
  EXPECT_THAT(std::vector<std::string>(got.begin() + want.size(), got.end()),
              ElementsAre("COPY train/ /workspace/train/"));
}

TEST(RecipeSeedEquivalence, MinimalRecipeRendersTheSeedsShortDockerfile) {
  RenderResult r = render_recipe_file(kSource + "/examples/minimal.yaml", {});
  ASSERT_THAT(briefs(r.diagnostics), IsEmpty());
  EXPECT_EQ(shapes("rendered", r.dockerfile),
            shapes("seed", read(kSource + "/tests/fixtures/seed002/short.Dockerfile")));
}

TEST(RenderRecipe, ExamplesLintClean) {
  for (const char* name : {"reference.yaml", "minimal.yaml"}) {
    EXPECT_THAT(briefs(lint_recipe_file(kSource + "/examples/" + name, LintOptions{})), IsEmpty()) << name;
  }
}

TEST(RenderRecipe, RunTextFindingsMapBackToTheRecipeWord) {
  RenderResult r = render(std::string(kHead) +
                          "steps:\n"
                          "  - name: mpi\n"
                          "    run: |\n"
                          "      apt-get update\n"
                          "      apt-get install -y openmpi-bin\n");
  EXPECT_THAT(briefs(r.diagnostics),
              ElementsAre("7:26 error [mpi-second-install] a distribution Open MPI package beside the base's "
                          "Open MPI (/usr/local/mpi): installs openmpi-bin"));
  EXPECT_EQ(r.diagnostics[0].source_line, "      apt-get install -y openmpi-bin");
  EXPECT_EQ(r.dockerfile, "");  // nothing rendered when there is an error
}

TEST(RenderRecipe, RelatedLocationsMapBackToTheRecipeToo) {
  RenderResult r = render(std::string(kHead) +
                          "steps:\n"
                          "  - name: mpi\n"
                          "    run: |\n"
                          "      apt-get update\n"
                          "      apt-get install -y openmpi-bin libopenmpi-dev\n");
  ASSERT_THAT(
      briefs(r.diagnostics),
      ElementsAre("7:26 error [mpi-second-install] a distribution Open MPI package beside the base's Open "
                  "MPI (/usr/local/mpi): installs openmpi-bin (and 1 place more)"));
  const auto& rel = r.diagnostics[0].related;
  ASSERT_EQ(rel.size(), 1u);
  EXPECT_EQ(rel[0].file, "recipe.yaml");
  EXPECT_EQ(rel[0].line, 7);
  EXPECT_EQ(rel[0].column, 38);
  EXPECT_EQ(rel[0].length, 14);
  EXPECT_EQ(rel[0].message, "installs libopenmpi-dev");
}

TEST(RenderRecipe, RunTextThatRunsTheInstallerAgainIsChecked) {
  RenderResult r = render(std::string(kHead) +
                          "steps:\n"
                          "  - name: again\n"
                          "    run: cd /tmp/aws-efa-installer && ./efa_installer.sh -y\n");
  // Each Dockerfile rule that fires on the second installer run, at the
  // installer word of the run line.
  std::vector<std::string> ids;
  for (const auto& d : r.diagnostics) {
    EXPECT_EQ(d.line, 5);
    EXPECT_EQ(d.column, 39);
    ids.push_back(d.rule_id + " " + std::string(to_string(d.severity)));
  }
  EXPECT_THAT(ids, ::testing::IsSupersetOf(
                       {"efa-apt-update error", "efa-container-flags error", "efa-container-flags warning"}));
}

TEST(RenderRecipe, EnvRefusalsAreReportedOnceAtTheValue) {
  RenderResult r = render(std::string(kHead) + "steps:\n  - name: s\n    env: {NCCL_NET: IB}\n");
  EXPECT_THAT(
      briefs(r.diagnostics),
      ElementsAre("5:21 error [nccl-ib-settings] NCCL_NET=IB forces the InfiniBand transport instead of "
                  "EFA"));
}

TEST(RenderRecipe, WarningsStillRender) {
  RenderResult r = render(std::string(kHead) + "steps:\n  - name: s\n    env: {NCCL_IB_HCA: mlx5}\n");
  ASSERT_EQ(r.diagnostics.size(), 1u);
  EXPECT_EQ(r.diagnostics[0].severity, Severity::Warning);
  EXPECT_THAT(r.dockerfile, ::testing::HasSubstr("ENV NCCL_IB_HCA=mlx5\n"));
}

TEST(RenderRecipe, ExpectedInstallerMismatchPointsAtTheVersion) {
  LintOptions opt;
  apply_expect(opt, "efa-installer=1.49.0");
  std::vector<Diagnostic> d = lint_recipe_file(kSource + "/examples/minimal.yaml", opt);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].rule_id, "efa-version-pin");
  EXPECT_EQ(d[0].severity, Severity::Error);
  EXPECT_EQ(d[0].file, kSource + "/examples/minimal.yaml");
  EXPECT_EQ(d[0].line, 7);
  EXPECT_EQ(d[0].column, 14);
}

TEST(RenderRecipe, UnparsableRunTextIsARecipeError) {
  RenderResult r = render(std::string(kHead) + "steps:\n  - name: s\n    run: echo \"unterminated\n");
  ASSERT_EQ(r.diagnostics.size(), 1u);
  EXPECT_EQ(r.diagnostics[0].rule_id, "recipe-schema");
  EXPECT_EQ(r.diagnostics[0].line, 5);
  EXPECT_THAT(r.diagnostics[0].message, ::testing::StartsWith("the rendered Dockerfile does not parse: "));
}

TEST(RenderRecipe, SetOverridesReachTheDockerfile) {
  RenderResult r = render_recipe_file(kSource + "/examples/reference.yaml", {"efa.installer=1.49.0"});
  ASSERT_THAT(briefs(r.diagnostics), IsEmpty());
  EXPECT_THAT(r.dockerfile, ::testing::HasSubstr("ARG EFA_INSTALLER_VERSION=1.49.0\n"));
}

TEST(RenderRecipe, PragmaCommentsSilenceFindings) {
  RenderResult r = render(std::string(kHead) +
                          "steps:\n"
                          "  - name: s\n"
                          "    env:\n"
                          "      # trainimg: ignore=nccl-ib-settings\n"
                          "      NCCL_IB_HCA: mlx5\n"
                          "      NCCL_IB_TC: '41'  # trainimg: ignore=nccl-ib-settings\n"
                          "      NCCL_IB_SL: '1'\n"
                          "    run: |\n"
                          "      # trainimg: ignore=mpi-second-install\n"
                          "      /opt/amazon/openmpi/bin/mpirun --version\n");
  EXPECT_THAT(briefs(r.diagnostics), ElementsAre("9:7 warning [nccl-ib-settings] NCCL_IB_SL is an "
                                                 "InfiniBand-only setting; on EFA it does nothing or "
                                                 "hides a wrong transport"));
  EXPECT_NE(r.dockerfile, "");
}

TEST(RenderRecipe, PragmaSilencesRecipeEfaFlags) {
  // An option newer than trainimg's list of installer options.
  RenderResult r = render(
      "base: nvcr.io/nvidia/pytorch:26.08-py3\nefa:\n  installer: 1.50.0\n"
      "  flags: [--build-ngc]  # trainimg: ignore=recipe-efa-flags\n");
  EXPECT_THAT(briefs(r.diagnostics), IsEmpty());
  EXPECT_THAT(r.dockerfile, ::testing::HasSubstr(" --no-verify --build-ngc \\\n"));
}

TEST(RenderRecipe, PragmaDoesNotSilenceSchemaErrors) {
  RenderResult r = render(std::string(kHead) + "# trainimg: ignore=recipe-schema\nstepz: []\n");
  EXPECT_EQ(r.diagnostics.size(), 1u);
}

TEST(RenderRecipe, MalformedYamlThrows) {
  EXPECT_THROW(render("base: [\n"), Error);
}

}  // namespace
}  // namespace trainimg::recipes
