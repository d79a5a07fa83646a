// SPDX-License-Identifier: GPL-3.0-or-later
#include "recipes/recipe/schema.h"

#include <gtest/gtest.h>

namespace trainimg::recipes {
namespace {

TEST(EditDistance, CountsInsertDeleteSubstitute) {
  EXPECT_EQ(edit_distance("", ""), 0);
  EXPECT_EQ(edit_distance("installer", "installer"), 0);
  EXPECT_EQ(edit_distance("instaler", "installer"), 1);
  EXPECT_EQ(edit_distance("kitten", "sitting"), 3);
  EXPECT_EQ(edit_distance("", "apt"), 3);
}

TEST(Suggest, ProposesTheClosestKnownKey) {
  EXPECT_EQ(suggest("instaler", efa_fields()), "installer");
  EXPECT_EQ(suggest("step", recipe_fields()), "steps");
  EXPECT_EQ(suggest("entry_point", recipe_fields()), "entrypoint");
  EXPECT_EQ(did_you_mean("envv", step_fields()), " (did you mean 'env'?)");
}

TEST(Suggest, StaysSilentForUnrelatedWords) {
  EXPECT_EQ(suggest("kubernetes", recipe_fields()), "");
  EXPECT_EQ(did_you_mean("zzzzzz", copy_fields()), "");
}

}  // namespace
}  // namespace trainimg::recipes
