// SPDX-License-Identifier: GPL-3.0-or-later
#include "common/cpus.h"

#include <gtest/gtest.h>
#include <sched.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

namespace trainimg {
namespace {

namespace fs = std::filesystem;

class CgroupQuota : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("cpus_test." + std::to_string(::getpid()) + "." +
                                         ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
    fs::create_directories(root_);
  }
  void TearDown() override { fs::remove_all(root_); }
  void put(const std::string& rel, const std::string& text) {
    fs::create_directories((root_ / rel).parent_path());
    std::ofstream(root_ / rel) << text;
  }
  std::optional<unsigned> quota(const std::string& proc) { return cgroup_cpu_quota(proc, root_.string()); }
  fs::path root_;
};

TEST_F(CgroupQuota, V2CpuMaxRoundsUpAndTheTightestLevelWins) {
  put("cpu.max", "max 100000\n");
  put("slurm/job_7/cpu.max", "800000 100000\n");         // 8 CPUs for the job
  put("slurm/job_7/step_0/cpu.max", "250000 100000\n");  // 2.5 for the step: 3
  EXPECT_EQ(quota("0::/slurm/job_7/step_0\n"), 3u);
  EXPECT_EQ(quota("0::/slurm/job_7\n"), 8u);
  EXPECT_EQ(quota("0::/\n"), std::nullopt);             // "max": none
  put("slurm/job_7/step_0/cpu.max", "50000 100000\n");  // half a CPU: one
  EXPECT_EQ(quota("0::/slurm/job_7/step_0\n"), 1u);
}

TEST_F(CgroupQuota, V1CfsQuotaOnTheCpuControllerOnly) {
  put("cpu,cpuacct/docker/abc/cpu.cfs_quota_us", "400000\n");
  put("cpu,cpuacct/docker/abc/cpu.cfs_period_us", "100000\n");
  put("cpu,cpuacct/cpu.cfs_quota_us", "-1\n");
  put("cpu,cpuacct/cpu.cfs_period_us", "100000\n");
  EXPECT_EQ(quota("12:memory:/docker/abc\n4:cpu,cpuacct:/docker/abc\n1:name=systemd:/docker/abc\n"), 4u);
  EXPECT_EQ(quota("12:memory:/docker/abc\n"), std::nullopt);  // no cpu controller named
  // A container's own hierarchy mounted at the root, the host's path named: the root is read.
  fs::remove_all(root_ / "cpu,cpuacct");
  put("cpu/cpu.cfs_quota_us", "150000\n");
  put("cpu/cpu.cfs_period_us", "100000\n");
  EXPECT_EQ(quota("3:cpu:/docker/elsewhere\n"), 2u);
}

TEST_F(CgroupQuota, NoCgroupFilesOrGarbageMeansNoQuota) {
  EXPECT_EQ(quota(""), std::nullopt);
  EXPECT_EQ(quota("0::/a/b\n"), std::nullopt);
  put("cpu.max", "lots 100000\n");
  EXPECT_EQ(quota("0::/\n"), std::nullopt);
  put("cpu.max", "100000 0\n");
  EXPECT_EQ(quota("0::/\n"), std::nullopt);
  EXPECT_EQ(quota("garbage without colons\n0::/../../etc\n"), std::nullopt);
}

// The affinity mask is what Slurm's cpusets and taskset set: a thread
// allowed one CPU counts one, whatever the machine has.
TEST(UsableCpus, FollowsTheAffinityMask) {
  cpu_set_t all;
  ASSERT_EQ(sched_getaffinity(0, sizeof all, &all), 0);
  EXPECT_LE(usable_cpus(), static_cast<unsigned>(CPU_COUNT(&all)));
  EXPECT_GE(usable_cpus(), 1u);
  unsigned seen = 0;
  std::thread t([&] {
    cpu_set_t one;
    CPU_ZERO(&one);
    int cpu = 0;
    while (!CPU_ISSET(cpu, &all)) ++cpu;
    CPU_SET(cpu, &one);
    if (sched_setaffinity(0, sizeof one, &one) == 0) seen = usable_cpus();
  });
  t.join();
  EXPECT_EQ(seen, 1u);
}

std::string this_threads_name() {
  std::ifstream in("/proc/self/task/" + std::to_string(::gettid()) + "/comm");
  std::string name;
  std::getline(in, name);
  return name;
}

TEST(NameThisThread, NamesTheThreadAndKeepsAnEarlierNameWhenAsked) {
  std::string first, second, third;
  std::thread([&] {
    name_this_thread("ti-layer");
    first = this_threads_name();
    name_this_thread("ti-compress", true);  // named already: kept
    second = this_threads_name();
    name_this_thread("a-name-longer-than-fifteen-bytes");
    third = this_threads_name();
  }).join();
  EXPECT_EQ(first, "ti-layer");
  EXPECT_EQ(second, "ti-layer");
  EXPECT_EQ(third, "a-name-longer-t");  // the kernel keeps 15 bytes
  std::string unnamed;
  std::thread([&] {
    name_this_thread("ti-compress", true);  // a thread nobody named
    unnamed = this_threads_name();
  }).join();
  EXPECT_EQ(unnamed, "ti-compress");
}

TEST(NameThisThread, NeverRenamesTheMainThreadByTheWay) {
  const std::string before = this_threads_name();
  if (::gettid() != ::getpid()) GTEST_SKIP() << "the test does not run on the main thread";
  name_this_thread("ti-compress", true);
  EXPECT_EQ(this_threads_name(), before);
}

}  // namespace
}  // namespace trainimg
