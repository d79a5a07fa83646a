// SPDX-License-Identifier: GPL-3.0-or-later
// Recipe YAML: load, validate, render and lint the rendered Dockerfile.
#include "recipes/recipes.h"
#include "tests/fuzz/fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace trainimg;
  try {
    recipes::render_recipe_text("recipe.yaml", std::string(fuzz::as_view(data, size)), {}, "");
  } catch (const Error&) {
  }
  return 0;
}
