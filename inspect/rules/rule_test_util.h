// SPDX-License-Identifier: GPL-3.0-or-later
// Runs one image rule on the facts of a fixture image (tests only).
#pragma once

#include <vector>

#include "inspect/facts/ngc_fixture_test_util.h"
#include "inspect/rules/rule.h"

namespace trainimg::inspect::rules {

inline std::vector<Diagnostic> run_rule(const ImageRule& r, const facts::ImageFacts& f,
                                        const ImageExpectations& e = {}) {
  std::vector<Diagnostic> out;
  Context c{f, e};
  r.check(r.info, c, out);
  return out;
}

inline std::vector<Diagnostic> run_rule(const ImageRule& r, const testing::ImageSpec& img,
                                        const ImageExpectations& e = {}) {
  return run_rule(r, testing::facts_of(img), e);
}

}  // namespace trainimg::inspect::rules
