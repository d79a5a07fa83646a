// SPDX-License-Identifier: GPL-3.0-or-later
#include "recipes/recipe/load.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "common/error.h"
#include "recipes/recipe/test_support.h"

namespace trainimg::recipes {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;
using testing::kHead;
using testing::load_text;
using testing::schema_of;

TEST(LoadRecipe, ReadsEveryKeyWithItsPosition) {
  LoadResult lr = load_text(
      "base: nvcr.io/nvidia/pytorch:26.08-py3\n"
      "platform: linux/amd64\n"
      "efa:\n"
      "  installer: 1.50.0\n"
      "  flags: [--skip-mpi]\n"
      "  mirror: http://127.0.0.1:8000/\n"
      "apt: [curl, git]\n"
      "args: {COMMIT: abc}\n"
      "steps:\n"
      "  - name: build\n"
      "    env: {A: '1'}\n"
      "    run: make\n"
      "labels: {org.opencontainers.image.title: train}\n"
      "workdir: /workspace\n"
      "entrypoint: [python]\n"
      "cmd: train.py --epochs 3\n");
  ASSERT_THAT(lr.diagnostics, IsEmpty());
  const Recipe& r = *lr.recipe;
  EXPECT_EQ(r.base.value, "nvcr.io/nvidia/pytorch:26.08-py3");
  EXPECT_EQ(r.base.where.line, 1);
  EXPECT_EQ(r.base.where.column, 7);
  EXPECT_EQ(r.platform->value, "linux/amd64");
  EXPECT_EQ(r.efa_installer.value, "1.50.0");
  EXPECT_EQ(r.efa_installer.where.line, 4);
  EXPECT_EQ(r.efa_installer.where.column, 14);
  EXPECT_EQ(r.efa_mirror.value, "http://127.0.0.1:8000");  // trailing slash dropped
  ASSERT_EQ(r.efa_flags.size(), 1u);
  EXPECT_EQ(r.efa_flags[0].where.column, 11);
  ASSERT_EQ(r.apt.size(), 2u);
  EXPECT_EQ(r.apt[1].value, "git");
  ASSERT_EQ(r.args.size(), 1u);
  EXPECT_EQ(r.args[0].key.value, "COMMIT");
  ASSERT_EQ(r.steps.size(), 1u);
  EXPECT_EQ(r.steps[0].env[0].value.value, "1");
  EXPECT_EQ(r.steps[0].run->value, "make");
  EXPECT_EQ(r.labels[0].key.value, "org.opencontainers.image.title");
  EXPECT_EQ(r.workdir->value, "/workspace");
  EXPECT_TRUE(r.entrypoint->exec_form);
  EXPECT_FALSE(r.cmd->exec_form);
}

TEST(LoadRecipe, LiteralBlockRunLinesKnowTheirSourcePositions) {
  LoadResult lr = load_text(std::string(kHead) +
                            "steps:\n"
                            "  - name: s\n"
                            "    run: |\n"
                            "      first\n"
                            "\n"
                            "        indented\n");
  ASSERT_THAT(lr.diagnostics, IsEmpty());
  const Text& run = *lr.recipe->steps[0].run;
  ASSERT_EQ(run.lines.size(), 3u);
  EXPECT_EQ(run.lines[0].line, 6);
  EXPECT_EQ(run.lines[0].column, 7);
  EXPECT_EQ(run.lines[2].line, 8);
  EXPECT_EQ(run.lines[2].column, 7);  // the block's indentation; the rest is the value's
}

// Found by fuzz_recipe (tests/fuzz/regressions/recipe/): a step mapping
// without 'name' made yaml-cpp throw YAML::InvalidNode out of the loader.
TEST(LoadRecipe, StepWithoutNameIsADiagnosticNotAnException) {
  LoadResult lr;
  ASSERT_NO_THROW(lr = load_text(std::string(kHead) + "steps:\n  - description: x\n    run: make\n"));
  ASSERT_FALSE(lr.diagnostics.empty());
  bool named = false;
  for (const auto& d : lr.diagnostics) named |= d.message.find("name") != std::string::npos;
  EXPECT_TRUE(named);
}

TEST(LoadRecipe, UnknownKeysSuggestTheClosestOne) {
  EXPECT_THAT(schema_of("base: x\nefa:\n  instaler: 1.50.0\nstep: []\n"),
              ElementsAre("3:3 error [recipe-schema] unknown key 'instaler' in 'efa' (did you mean 'installer'?)",
                          "2:1 error [recipe-schema] 'efa' has no 'installer' version",
                          "4:1 error [recipe-schema] unknown key 'step' in the recipe (did you mean 'steps'?)"));
}

TEST(LoadRecipe, UnknownStepKeyNamesTheStep) {
  EXPECT_THAT(schema_of(std::string(kHead) + "steps:\n  - name: deepep\n    runn: make\n"),
              ElementsAre("5:5 error [recipe-schema] unknown key 'runn' in step 'deepep' (did you mean 'run'?)",
                          "4:11 warning [recipe-schema] step 'deepep' has no run, env or copy; it renders nothing"));
}

TEST(LoadRecipe, UnknownKeyFarFromAnyKnownOneHasNoSuggestion) {
  EXPECT_THAT(schema_of(std::string(kHead) + "kubernetes: yes\n"),
              ElementsAre("3:1 error [recipe-schema] unknown key 'kubernetes' in the recipe"));
}

TEST(LoadRecipe, WrongTypesPointAtTheValue) {
  EXPECT_THAT(schema_of("base: [a, b]\nefa: {installer: 1.50.0}\napt: curl\nsteps: {name: x}\n"),
              ElementsAre("1:7 error [recipe-schema] 'base' must be a string, found a list",
                          "3:6 error [recipe-schema] 'apt' must be a list, found a string",
                          "4:8 error [recipe-schema] 'steps' must be a list, found a mapping",
                          "1:1 error [recipe-schema] the recipe has no 'base' image"));
}

TEST(LoadRecipe, MissingValuePointsAtTheKey) {
  EXPECT_THAT(schema_of("base:\nefa: {installer: 1.50.0}\n"),
              ElementsAre("1:1 error [recipe-schema] 'base' must be a string, found nothing",
                          "1:1 error [recipe-schema] the recipe has no 'base' image"));
}

TEST(LoadRecipe, BadVersionsAreRefused) {
  EXPECT_THAT(schema_of("base: x\nefa: {installer: latest}\n"),
              ElementsAre("2:18 error [recipe-schema] efa.installer must be a pinned version, not 'latest'"));
  EXPECT_THAT(schema_of("base: x\nefa: {installer: v1.50}\n"),
              ElementsAre("2:18 error [recipe-schema] efa.installer 'v1.50' is not a version"));
  EXPECT_THAT(schema_of("base: x\nefa: {installer: '1.50.0'}\n"), IsEmpty());  // quoted is fine
}

TEST(LoadRecipe, MissingBaseAndEfaAreReported) {
  EXPECT_THAT(schema_of("apt: [curl]\n"),
              ElementsAre("1:1 error [recipe-schema] the recipe has no 'base' image",
                          "1:1 error [recipe-schema] the recipe has no 'efa' section"));
}

TEST(LoadRecipe, EmptyAndNonMappingDocumentsAreRefused) {
  EXPECT_THAT(schema_of(""), ElementsAre("1:1 error [recipe-schema] the recipe is empty"));
  EXPECT_THAT(schema_of("- a\n- b\n"),
              ElementsAre("1:1 error [recipe-schema] a recipe must be a mapping of keys, found a list"));
}

TEST(LoadRecipe, MalformedYamlThrowsWithThePosition) {
  try {
    load_text("base: x\nefa: {installer: 1.50.0\napt: [curl]\n");
    FAIL() << "no error";
  } catch (const Error& e) {
    const Diagnostic& d = e.diagnostic();
    EXPECT_EQ(d.rule_id, "recipe-syntax");
    EXPECT_EQ(d.file, "recipe.yaml");
    EXPECT_EQ(d.line, 3);
    EXPECT_EQ(d.column, 4);
    EXPECT_EQ(d.message, "malformed YAML: end of map flow not found");
  }
}

TEST(LoadRecipe, DuplicateKeysAreRefused) {
  EXPECT_THAT(schema_of("base: x\nbase: y\nefa: {installer: 1.50.0}\n"),
              ElementsAre("2:1 error [recipe-schema] duplicate key 'base' in the recipe"));
}

TEST(LoadRecipe, NamesAreChecked) {
  EXPECT_THAT(
      schema_of(std::string(kHead) +
                "apt: [Curl]\n"
                "args: {1X: a, EFA_INSTALLER_VERSION: 1.49.0}\n"
                "steps:\n"
                "  - name: a b\n"
                "    env: {BAD-NAME: x}\n"
                "    run: make\n"
                "  - name: c\n"
                "    run: make\n"
                "  - name: c\n"
                "    run: make\n"),
      ElementsAre("3:7 error [recipe-schema] 'Curl' is not a Debian package name",
                  "4:8 error [recipe-schema] '1X' is not a valid name in 'args'",
                  "4:15 error [recipe-schema] EFA_INSTALLER_VERSION is set by efa.installer",
                  "6:11 error [recipe-schema] step name 'a b' must be letters, digits, '.', '-' or '_'",
                  "7:11 error [recipe-schema] 'BAD-NAME' is not a valid name in 'steps.a b.env'",
                  "11:11 error [recipe-schema] duplicate step name 'c'"));
}

TEST(LoadRecipe, ShellMustBeJoinOrRaw) {
  EXPECT_THAT(schema_of(std::string(kHead) + "steps:\n  - {name: s, run: make, shell: bash}\n"),
              ElementsAre("4:33 error [recipe-schema] shell 'bash' is not 'join' or 'raw'"));
  LoadResult lr = load_text(std::string(kHead) + "steps:\n  - {name: s, run: make, shell: raw}\n");
  EXPECT_EQ(lr.recipe->steps[0].shell, Shell::Raw);
}

TEST(LoadRecipe, CopySourcesMustStayInsideAnExistingContext) {
  std::string text = std::string(kHead) +
                     "steps:\n"
                     "  - name: code\n"
                     "    copy:\n"
                     "      - {src: train/, dst: /workspace/train/}\n"
                     "      - {src: ../secret, dst: /x}\n"
                     "      - {src: missing/, dst: /y}\n"
                     "      - {dst: /z}\n";
  LoadResult lr = load_text(text, {}, std::string(TRAINIMG_SOURCE_DIR) + "/examples");
  EXPECT_THAT(testing::briefs(lr.diagnostics),
              ElementsAre("7:15 error [recipe-schema] copy source '../secret' must be a path inside the build "
                          "context",
                          "8:15 error [recipe-schema] copy source 'missing/' does not exist in the build context '" +
                              std::string(TRAINIMG_SOURCE_DIR) + "/examples'",
                          "9:9 error [recipe-schema] copy entry has no 'src'"));
  ASSERT_EQ(lr.recipe->steps[0].copy.size(), 1u);
  EXPECT_EQ(lr.recipe->steps[0].copy[0].dst.value, "/workspace/train/");
}

TEST(LoadRecipe, MirrorMustBeAnHttpUrl) {
  EXPECT_THAT(schema_of("base: x\nefa: {installer: 1.50.0, mirror: 'ftp://m'}\n"),
              ElementsAre("2:34 error [recipe-schema] efa.mirror 'ftp://m' is not an http(s) URL"));
}

}  // namespace
}  // namespace trainimg::recipes
