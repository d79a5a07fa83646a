// SPDX-License-Identifier: GPL-3.0-or-later
// AtomicFile's two ways of staying invisible until commit(): an O_TMPFILE
// inode (ext4 and tmpfs here) and the named, flock()ed partial file
// (TRAINIMG_ATOMIC_NAMED=1, what file systems without O_TMPFILE get), and
// the removal of partial files whose writer is gone.
#include "common/atomic_file.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>
#include <vector>

#include "common/error.h"

namespace trainimg {
namespace {

namespace fs = std::filesystem;

struct Dir {
  fs::path p;
  explicit Dir(const std::string& base) {
    std::string t = base + "/atomic-XXXXXX";
    p = ::mkdtemp(t.data());
  }
  ~Dir() { fs::remove_all(p); }
  size_t count() const { return static_cast<size_t>(std::distance(fs::directory_iterator(p), {})); }
};

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

struct NamedMode {
  NamedMode() { ::setenv("TRAINIMG_ATOMIC_NAMED", "1", 1); }
  ~NamedMode() { ::unsetenv("TRAINIMG_ATOMIC_NAMED"); }
};

class AtomicFileOn : public ::testing::TestWithParam<const char*> {};

TEST_P(AtomicFileOn, UnnamedUntilCommitThenLinkedWithoutReplacing) {
  Dir d(GetParam());
  std::string target = (d.p / "out").string();
  {
    AtomicFile f(target, /*replace=*/false);
    EXPECT_EQ(f.partial_path(), "") << "O_TMPFILE expected on " << GetParam();
    f.write("new");
    EXPECT_EQ(d.count(), 0u);  // nothing visible while writing
    std::ofstream(target) << "raced";
    EXPECT_THROW(f.commit(), Error);  // a target that appeared meanwhile is kept
  }
  EXPECT_EQ(slurp(target), "raced");
  EXPECT_EQ(d.count(), 1u);
  fs::remove(target);
  {
    AtomicFile f(target, /*replace=*/false, 0600);
    f.write("done");
    f.commit();
  }
  EXPECT_EQ(slurp(target), "done");
  EXPECT_EQ(fs::status(target).permissions() & fs::perms::all,
            fs::perms::owner_read | fs::perms::owner_write);
  {
    AtomicFile f(target, /*replace=*/true);
    f.write("forced");
    f.commit();
  }
  EXPECT_EQ(slurp(target), "forced");
  EXPECT_EQ(d.count(), 1u);  // the link-then-rename name is gone
}

TEST_P(AtomicFileOn, NamedPartialIsLockedAndStaleOnesAreRemoved) {
  NamedMode named;
  Dir d(GetParam());
  std::string target = (d.p / "img.sqsh").string();
  AtomicFile live(target);
  ASSERT_NE(live.partial_path(), "");
  live.write("live");
  // A partial file left by a killed writer: nobody holds its lock.
  std::string stale = target + ".partial-ABC123";
  std::ofstream(stale) << "half";
  // Not ours: other names and other targets' partial files stay.
  std::ofstream((d.p / "img.sqsh.partial-toolong1").string()) << "x";
  std::ofstream((d.p / "other.sqsh.partial-ABC123").string()) << "x";
  EXPECT_EQ(remove_stale_partials(target), 1);
  EXPECT_FALSE(fs::exists(stale));
  EXPECT_TRUE(fs::exists(live.partial_path())) << "a live writer's partial file was removed";
  // A locked one (another live writer) stays too.
  std::string locked = target + ".partial-LOCKED";
  std::ofstream(locked) << "busy";
  int fd = ::open(locked.c_str(), O_RDONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::flock(fd, LOCK_EX), 0);
  EXPECT_EQ(remove_stale_partials(target), 0);
  ::close(fd);
  EXPECT_EQ(remove_stale_partials(target), 1);
  live.commit();
  EXPECT_EQ(slurp(target), "live");
  EXPECT_EQ(d.count(), 3u);  // img.sqsh and the two foreign files
}

// AtomicFile learns the umask to apply to its mode. Reading it with umask(2)
// sets it: other threads creating files in that window got 0666 / 0777, and two
// readers at once could leave the process's umask at 0 for good (CI saw the
// files a test wrote after an import come out 0666).
TEST(AtomicFileUmask, ManyAtOnceNeverChangeTheUmaskOtherThreadsSee) {
  Dir d("/tmp");
  mode_t saved = ::umask(022);
  std::atomic<bool> stop{false};
  std::vector<std::thread> writers;
  for (int t = 0; t < 4; ++t) {
    writers.emplace_back([&, t] {
      for (int i = 0; !stop.load(); ++i) {
        AtomicFile f((d.p / ("w" + std::to_string(t) + "-" + std::to_string(i % 8))).string(), true, 0666);
        f.write("x");
        f.commit();
      }
    });
  }
  int wrong = 0;
  for (int i = 0; i < 2000; ++i) {
    std::string name = (d.p / ("plain-" + std::to_string(i % 16))).string();
    int fd = ::open(name.c_str(), O_CREAT | O_WRONLY | O_CLOEXEC, 0666);
    ASSERT_GE(fd, 0);
    struct stat st {};
    ::fstat(fd, &st);
    ::close(fd);
    ::unlink(name.c_str());
    if ((st.st_mode & 0777) != 0644) ++wrong;
  }
  stop = true;
  for (auto& w : writers) w.join();
  mode_t after = ::umask(saved);
  EXPECT_EQ(wrong, 0) << "files created while AtomicFiles were made got another umask";
  EXPECT_EQ(after, 022u);
  for (const auto& e : fs::directory_iterator(d.p))
    EXPECT_EQ(e.status().permissions() & fs::perms::all, static_cast<fs::perms>(0644)) << e.path();
}

INSTANTIATE_TEST_SUITE_P(Ext4AndTmpfs, AtomicFileOn, ::testing::Values("/tmp", "/dev/shm"));

}  // namespace
}  // namespace trainimg
