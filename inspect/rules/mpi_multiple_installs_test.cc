// SPDX-License-Identifier: GPL-3.0-or-later
#include <gtest/gtest.h>

#include "inspect/rules/rule_test_util.h"

namespace trainimg::inspect::rules {
namespace {

TEST(MpiMultipleInstalls, NgcLikeInstallerCopiesBesideNgcAreReportedAsExpected) {
  auto d = run_rule(kMpiMultipleInstalls, testing::ngc_image());
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].severity, Severity::Warning);
  EXPECT_EQ(d[0].message,
            "3 Open MPI installations: /opt/amazon/openmpi (4.1.7-1, efa-installer), /opt/amazon/openmpi5 (5.0.9-1, "
            "efa-installer), /usr/local/mpi (5.0.7, ngc); the EFA installer's copies beside NGC's are expected: keep "
            "using NGC's and never build or run against /opt/amazon/openmpi*");
}

TEST(MpiMultipleInstalls, WarnsForADistributionOpenMpiOnTop) {
  testing::NgcOptions o;
  o.installer = false;
  auto img = testing::ngc_image(o);
  img.layer()
      .file("/usr/bin/mpirun", testing::elf_bytes(testing::ElfSpec().executable()), 0755)
      .file("/usr/lib/x86_64-linux-gnu/libmpi.so.40.30.2", testing::libmpi_elf("4.1.2"), 0644)
      .symlink("/usr/lib/x86_64-linux-gnu/libmpi.so.40", "libmpi.so.40.30.2");
  auto d = run_rule(kMpiMultipleInstalls, img);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].severity, Severity::Warning);
  EXPECT_EQ(d[0].message, "2 Open MPI installations: /usr (4.1, distribution), /usr/local/mpi (5.0.7, ngc)");
}

// awsome-distributed-training nccl-tests.Dockerfile: a CUDA base (no MPI of
// its own) plus the EFA installer, which lays down Open MPI 4 and 5.
TEST(MpiMultipleInstalls, QuietForTheInstallersOwnPairOnABaseWithoutMpi) {
  auto img = testing::ngc_image();
  img.layer().whiteout("/usr/local/mpi");
  EXPECT_TRUE(run_rule(kMpiMultipleInstalls, img).empty());
}

TEST(MpiMultipleInstalls, QuietWithOnlyNgcsMpi) {
  testing::NgcOptions o;
  o.installer = false;
  EXPECT_TRUE(run_rule(kMpiMultipleInstalls, testing::ngc_image(o)).empty());
}

}  // namespace
}  // namespace trainimg::inspect::rules
