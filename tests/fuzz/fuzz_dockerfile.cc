// SPDX-License-Identifier: GPL-3.0-or-later
// Dockerfile parser and every lint rule on arbitrary text.
#include "recipes/dockerfile/dockerfile.h"
#include "recipes/recipes.h"
#include "tests/fuzz/fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace trainimg;
  SourceFile f("Dockerfile", std::string(fuzz::as_view(data, size)));
  try {
    recipes::Dockerfile df = recipes::parse_dockerfile(f);
    recipes::LintOptions opt;
    opt.expect_efa_installer = "1.50.0";
    recipes::lint_dockerfile(df, f, opt);
  } catch (const Error&) {
  }
  return 0;
}
