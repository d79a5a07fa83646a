// SPDX-License-Identifier: GPL-3.0-or-later
#include <gtest/gtest.h>

#include "inspect/rules/rule_test_util.h"

namespace trainimg::inspect::rules {
namespace {

TEST(CudaForwardCompat, InfoWhenNgcLikeImageCudaIsNewerThanTheHostDriver) {
  auto d = run_rule(kCudaForwardCompat, testing::ngc_image(), parse_expect("cuda-driver=13.2"));
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].severity, Severity::Info);
  EXPECT_EQ(d[0].message,
            "image CUDA 13.4.1 is newer than the host driver's CUDA 13.2 (--expect): normal, the container starts with "
            "'CUDA Forward Compatibility mode ENABLED' (/usr/local/cuda-13.4/compat/libcuda.so.1); verify custom CUDA "
            "kernels separately");
}

TEST(CudaForwardCompat, WarningWithoutCompatLibraries) {
  testing::NgcOptions o;
  o.compat_libs = false;
  auto d = run_rule(kCudaForwardCompat, testing::ngc_image(o), parse_expect("cuda-driver=13.2"));
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].severity, Severity::Warning);
}

TEST(CudaForwardCompat, QuietForTheSameMajorMinorOrNoHost) {
  auto f = testing::facts_of(testing::ngc_image());
  EXPECT_TRUE(run_rule(kCudaForwardCompat, f, parse_expect("cuda-driver=13.4")).empty());
  EXPECT_TRUE(run_rule(kCudaForwardCompat, f).empty());
}

}  // namespace
}  // namespace trainimg::inspect::rules
