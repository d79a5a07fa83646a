// SPDX-License-Identifier: GPL-3.0-or-later
// --set overrides: spliced into the YAML before validation, refused with
// "--set KEY" positions when the key is not in the schema.
#include "recipes/recipe/yaml_doc.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "common/error.h"
#include "recipes/recipe/test_support.h"

namespace trainimg::recipes {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;
using testing::load_text;
using testing::schema_of;

const std::string kRecipe =
    "base: nvcr.io/nvidia/pytorch:26.08-py3\n"
    "efa:\n"
    "  installer: 1.50.0\n"
    "apt: [curl, git]\n"
    "steps:\n"
    "  - name: deepep\n"
    "    env: {TORCH_CUDA_ARCH_LIST: '10.0'}\n"
    "    run: make\n";

TEST(SetOverride, ReplacesAScalar) {
  LoadResult lr = load_text(kRecipe, {"efa.installer=1.49.0"});
  ASSERT_THAT(lr.diagnostics, IsEmpty());
  EXPECT_EQ(lr.recipe->efa_installer.value, "1.49.0");
  EXPECT_EQ(lr.recipe->efa_installer.where.file, "--set efa.installer");
  EXPECT_EQ(lr.recipe->efa_installer.where.line, 0);
  EXPECT_EQ(lr.recipe->base.where.file, "recipe.yaml");  // untouched nodes keep their place
}

TEST(SetOverride, AddsKeysAndAddressesListsByIndexOrStepName) {
  LoadResult lr = load_text(kRecipe, {"efa.mirror=http://127.0.0.1:8000", "apt.1=wget", "apt[0]=ca-certificates",
                                      "steps.deepep.env.NCCL_DEBUG=INFO", "steps[0].run=make -j8",
                                      "efa.flags=[--skip-mpi]", "labels.team=ml"});
  ASSERT_THAT(lr.diagnostics, IsEmpty());
  const Recipe& r = *lr.recipe;
  EXPECT_EQ(r.efa_mirror.value, "http://127.0.0.1:8000");
  EXPECT_EQ(r.apt[0].value, "ca-certificates");
  EXPECT_EQ(r.apt[1].value, "wget");
  ASSERT_EQ(r.steps[0].env.size(), 2u);
  EXPECT_EQ(r.steps[0].env[1].key.value, "NCCL_DEBUG");
  EXPECT_EQ(r.steps[0].run->value, "make -j8");
  ASSERT_EQ(r.efa_flags.size(), 1u);
  EXPECT_EQ(r.efa_flags[0].where.file, "--set efa.flags");
  EXPECT_EQ(r.labels[0].value.value, "ml");
}

TEST(SetOverride, LaterOverridesWin) {
  LoadResult lr = load_text(kRecipe, {"efa.installer=1.48.0", "efa.installer=1.49.0"});
  EXPECT_EQ(lr.recipe->efa_installer.value, "1.49.0");
}

TEST(SetOverride, UnknownKeysAreErrorsWithASuggestion) {
  EXPECT_THAT(schema_of(kRecipe, {"efa.instaler=1.49.0", "stepz.0.run=x", "base.tag=1", "steps.nope.run=x",
                                  "apt.9=x", "steps.0.env.A.B=1"}),
              ElementsAre("--set efa.instaler:0:0 error [recipe-schema] unknown key 'efa.instaler' (did you mean "
                          "'efa.installer'?)",
                          "--set stepz.0.run:0:0 error [recipe-schema] unknown key 'stepz' (did you mean 'steps'?)",
                          "--set base.tag:0:0 error [recipe-schema] 'base' is a single value; it has no 'tag'",
                          "--set steps.nope.run:0:0 error [recipe-schema] 'steps' has no entry 'nope'",
                          "--set apt.9:0:0 error [recipe-schema] 'apt.9' is out of range: 'apt' has 2 entries",
                          "--set steps.0.env.A.B:0:0 error [recipe-schema] 'steps.0.env.A' is a single value"));
}

TEST(SetOverride, BadValuesAreReportedAtTheOverride) {
  EXPECT_THAT(schema_of(kRecipe, {"efa.installer=latest", "apt=[a, b"}),
              ElementsAre("--set apt:0:0 error [recipe-schema] the value is not YAML: end of sequence flow not found",
                          "--set efa.installer:0:0 error [recipe-schema] efa.installer must be a pinned version, not "
                          "'latest'"));
}

TEST(SetOverride, WithoutEqualsSignIsAUsageError) {
  EXPECT_THROW(load_text(kRecipe, {"efa.installer"}), Error);
  EXPECT_THROW(load_text(kRecipe, {"=1.49.0"}), Error);
}

}  // namespace
}  // namespace trainimg::recipes
