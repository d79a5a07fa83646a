// SPDX-License-Identifier: GPL-3.0-or-later
// Crash safety (issue 15): `kill -9` at several points of `trainimg import`
// and `trainimg pyxis-importer get` leaves no file a reader could take for
// an output, on ext4 (/tmp here) and tmpfs (/dev/shm): with O_TMPFILE
// (common/atomic_file.h) nothing new at all; with the named partial file
// (TRAINIMG_ATOMIC_NAMED=1, what NFS/Lustre get) at most a
// `*.partial-XXXXXX` that the next import of the same target removes.
#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <set>
#include <string>
#include <thread>

namespace {

namespace fs = std::filesystem;

const std::string kBin = TRAINIMG_BIN;

int sh(const std::string& cmd) {
  int st = std::system(cmd.c_str());
  return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

struct Tmp {
  fs::path p;
  explicit Tmp(const std::string& base) {
    std::string t = base + "/trainimg-crash-XXXXXX";
    p = ::mkdtemp(t.data());
  }
  ~Tmp() { fs::remove_all(p); }
  std::string operator/(const std::string& s) const { return (p / s).string(); }
};

std::set<std::string> names(const fs::path& dir) {
  std::set<std::string> out;
  for (const auto& e : fs::directory_iterator(dir)) out.insert(e.path().filename().string());
  return out;
}

// Starts `cmd` (exec'd by sh, so the pid is trainimg's), SIGKILLs it after
// `ms` milliseconds; returns whether it was still running then.
bool run_and_kill(const std::string& cmd, int ms, const std::vector<std::string>& env = {}) {
  pid_t pid = ::fork();
  if (pid == 0) {
    for (const auto& kv : env) ::putenv(const_cast<char*>(kv.c_str()));
    ::freopen("/dev/null", "w", stderr);
    ::freopen("/dev/null", "w", stdout);
    ::execl("/bin/sh", "sh", "-c", ("exec " + cmd).c_str(), nullptr);
    _exit(127);
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(ms));
  bool running = ::waitpid(pid, nullptr, WNOHANG) == 0;
  ::kill(pid, SIGKILL);
  ::waitpid(pid, nullptr, 0);
  return running;
}

// A kill can land after the output was published but before the process
// exited; what it leaves then is the complete image, never a part of one.
// True when `image` is a squashfs whose whole directory reads back with
// every file of make_root(). (The sidecar is written after the image, so a
// kill between the two leaves the image alone.)
bool complete_image(const std::string& image) {
  return sh("unsquashfs -l " + image + " 2>/dev/null | grep -c '/f[0-9]*$' | grep -qx 12") == 0;
}

// Random data compressed with xz: an import that takes a few seconds.
void make_root(const std::string& root) {
  ASSERT_EQ(sh("mkdir -p " + root + " && for i in $(seq 1 12); do head -c 2000000 /dev/urandom > " + root +
               "/f$i; done"),
            0);
}

struct Case {
  const char* base;  // file system of the output
  bool named;        // TRAINIMG_ATOMIC_NAMED=1: the named partial file
  bool force;
};

void kill_during_import(const Case& c) {
  if (!fs::exists(c.base)) GTEST_SKIP() << c.base << " missing";
  Tmp src("/tmp"), out(c.base);
  make_root(src / "root");
  std::vector<std::string> env;
  if (c.named) env.push_back("TRAINIMG_ATOMIC_NAMED=1");
  const std::string target = out / "img.sqsh";
  if (c.force) {
    ASSERT_EQ(sh("echo old > " + target), 0);
  }
  const std::set<std::string> before = names(out.p);
  std::string cmd = kBin + " import dir:" + src / "root" + " -o " + target +
                    " --compression xz --progress none" + (c.force ? " --force" : "");
  int killed = 0;
  for (int ms : {20, 150, 600, 1500}) {
    if (!run_and_kill(cmd, ms, env)) {  // finished first: put things back, nothing to check
      fs::remove(target + ".json");
      if (c.force)
        sh("echo old > " + target);
      else
        fs::remove(target);
      continue;
    }
    ++killed;
    if (fs::exists(target + ".json") || (fs::exists(target) && sh("grep -qx old " + target) != 0)) {
      // killed between publishing and exiting
      if (fs::exists(target))
        EXPECT_TRUE(complete_image(target)) << "after kill at " << ms << " ms: an incomplete " << target;
      else
        ADD_FAILURE() << "after kill at " << ms << " ms: a sidecar without its image";
      fs::remove(target + ".json");
      if (c.force)
        sh("echo old > " + target);
      else
        fs::remove(target);
    }
    for (const auto& n : names(out.p)) {
      if (before.count(n)) continue;
      // Nothing new but, on the named path, the killed writer's partial file.
      EXPECT_TRUE(c.named && n.rfind("img.sqsh.partial-", 0) == 0) << "after kill at " << ms << " ms: " << n;
    }
    if (c.force) {
      EXPECT_EQ(sh("grep -qx old " + target), 0) << "the old output was replaced by a partial one";
    }
  }
  EXPECT_GT(killed, 0) << "the import always finished before the kill";
  // The next import of the same target cleans what the killed ones left.
  std::string env_prefix = c.named ? "TRAINIMG_ATOMIC_NAMED=1 " : "";
  ASSERT_EQ(sh(env_prefix + kBin + " import dir:" + src / "root" + " -o " + target +
               " --compression gzip --progress none --force >/dev/null 2>&1"),
            0);
  std::set<std::string> after = names(out.p);
  std::set<std::string> want = {"img.sqsh", "img.sqsh.json"};
  EXPECT_EQ(after, want);
  EXPECT_EQ(sh("unsquashfs -s " + target + " >/dev/null 2>&1"), 0);
}

TEST(CrashSafety, KillDuringImportOnExt4LeavesNothing) {
  kill_during_import({"/tmp", false, false});
}
TEST(CrashSafety, KillDuringForcedImportOnExt4KeepsTheOldOutput) {
  kill_during_import({"/tmp", false, true});
}
TEST(CrashSafety, KillDuringImportOnTmpfsLeavesNothing) {
  kill_during_import({"/dev/shm", false, false});
}
TEST(CrashSafety, KillDuringImportWithNamedPartialIsCleanedByTheNextRun) {
  kill_during_import({"/tmp", true, false});
}
TEST(CrashSafety, KillDuringForcedImportWithNamedPartialOnTmpfs) {
  kill_during_import({"/dev/shm", true, true});
}

TEST(CrashSafety, KillDuringPyxisImporterGetLeavesNoImage) {
  Tmp src("/tmp");
  make_root(src / "root");
  int killed = 0;
  for (int ms : {30, 200, 500, 1000}) {
    Tmp run("/dev/shm");
    std::vector<std::string> env = {"PYXIS_RUNTIME_PATH=" + run.p.string(), "SLURM_JOB_ID=7",
                                    "SLURM_STEP_ID=0"};
    if (!run_and_kill(kBin + " pyxis-importer get dir:" + src / "root", ms, env)) continue;  // it finished
    ++killed;
    // Whatever directories it made, no file is left in them: the step's
    // image is an O_TMPFILE inode until it is complete. A kill that lands
    // after the publish finds the complete image and its sidecar.
    for (const auto& e : fs::recursive_directory_iterator(run.p)) {
      if (!e.is_regular_file()) continue;
      const std::string p = e.path().string();
      const bool image = p.size() > 5 && p.compare(p.size() - 5, 5, ".sqsh") == 0;
      const bool sidecar = p.size() > 10 && p.compare(p.size() - 10, 10, ".sqsh.json") == 0;
      if (image)
        EXPECT_TRUE(complete_image(p)) << p << " is incomplete after a kill at " << ms << " ms";
      else if (sidecar)
        EXPECT_TRUE(complete_image(p.substr(0, p.size() - 5)))
            << p << " left without its complete image after a kill at " << ms << " ms";
      else
        ADD_FAILURE() << p << " left by pyxis-importer get killed at " << ms << " ms";
    }
  }
  EXPECT_GT(killed, 0);
}

}  // namespace
