// SPDX-License-Identifier: GPL-3.0-or-later
#include <gtest/gtest.h>

#include "inspect/rules/rule_test_util.h"

namespace trainimg::inspect::rules {
namespace {

TEST(MpiConflict, FiresWhenOpalPrefixPointsAtTheInstallersMpi) {
  auto img = testing::ngc_image();
  testing::set_env(img, "OPAL_PREFIX", "/opt/amazon/openmpi");
  auto d = run_rule(kMpiConflict, img);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].message,
            "the selected Open MPI is ambiguous: PATH -> /usr/local/mpi (/usr/local/mpi/bin/mpirun); OPAL_PREFIX -> "
            "/opt/amazon/openmpi (/opt/amazon/openmpi) (mixing them fails with 'opal_shmem_base_select failed' -> "
            "'MPI_INIT failed')");
}

TEST(MpiConflict, FiresForAProgramBuiltAgainstTheInstallersMpi) {
  auto img = testing::ngc_image();
  img.layer().file("/opt/app/bin/solver",
                   testing::elf_bytes(testing::ElfSpec().executable().runpath({"/opt/amazon/openmpi/lib"}).needs({"libmpi.so.40"})),
                   0755);
  auto d = run_rule(kMpiConflict, img);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_NE(d[0].message.find("ELF run path -> /opt/amazon/openmpi (/opt/app/bin/solver needs libmpi.so.40: "
                              "/opt/amazon/openmpi/lib/libmpi.so.40 (DT_RUNPATH of /opt/app/bin/solver))"),
            std::string::npos)
      << d[0].message;
}

// Seed 002's validated layout: the installer's /opt/amazon/openmpi beside
// NGC's /usr/local/mpi, nothing selecting it, a program built against NGC's.
TEST(MpiConflict, QuietOnNgcLikeImageWhoseSelectionAgrees) {
  auto img = testing::ngc_image();
  img.layer().file("/opt/app/bin/solver",
                   testing::elf_bytes(testing::ElfSpec().executable().runpath({"/usr/local/mpi/lib"}).needs({"libmpi.so.40"})),
                   0755);
  auto f = testing::facts_of(img);
  EXPECT_EQ(f.mpi_votes.size(), 2u);
  EXPECT_TRUE(run_rule(kMpiConflict, f).empty());
  EXPECT_EQ(run_rule(kMpiMultipleInstalls, f).size(), 1u);
}

}  // namespace
}  // namespace trainimg::inspect::rules
