// SPDX-License-Identifier: GPL-3.0-or-later
// `trainimg import` and `trainimg pyxis-importer` end to end: the real binary
// on real inputs, read back with the real unsquashfs.
#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace {

namespace fs = std::filesystem;

struct Result {
  int rc = -1;
  std::string out;
};

// Runs a shell command line; stdout (and stderr when merged with 2>&1).
Result sh(const std::string& cmd) {
  Result r;
  FILE* p = ::popen(cmd.c_str(), "r");
  if (!p) return r;
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) r.out.append(buf, n);
  int st = ::pclose(p);
  r.rc = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
  return r;
}

const std::string kBin = TRAINIMG_BIN;

struct Tmp {
  fs::path p;
  Tmp() {
    char t[] = "/tmp/trainimg-import-cli-XXXXXX";
    p = ::mkdtemp(t);
  }
  ~Tmp() { fs::remove_all(p); }
  std::string operator/(const std::string& s) const { return (p / s).string(); }
};

// A small rootfs with the file kinds enroot must keep.
void make_rootfs(const std::string& root) {
  sh("mkdir -p " + root + "/bin " + root + "/etc && printf 'x' > " + root + "/bin/a && ln " + root + "/bin/a " +
     root + "/bin/b && ln -s ../nowhere " + root + "/bin/dangling && mkfifo " + root + "/fifo && : > " + root +
     "/empty && echo '127.0.0.1 h' > " + root + "/etc/hosts");
}

TEST(ImportCli, DirImportHasEnrootsFilesAndKeepsLinksAndFifos) {
  Tmp t;
  make_rootfs(t / "root");
  Result r = sh(kBin + " import dir:" + t / "root" + " -o " + t / "img.sqsh" + " --progress none 2>&1");
  ASSERT_EQ(r.rc, 0) << r.out;
  EXPECT_EQ(r.out.substr(0, r.out.find('\n')), t / "img.sqsh");
  EXPECT_EQ(sh("unsquashfs -cat " + t / "img.sqsh" + " etc/rc.local").out,
            "# This file is sourced by /etc/rc when the container starts.\n"
            "# It can be used to manipulate the entrypoint or the command of the container.\n");
  EXPECT_EQ(sh("unsquashfs -cat " + t / "img.sqsh" + " etc/hosts").out, "");
  std::string ls = sh("unsquashfs -lln " + t / "img.sqsh" + " | awk '{print $1, $2, $3, $6, $7, $8}'").out;
  EXPECT_NE(ls.find("prw-r--r-- 0/0 0 squashfs-root/fifo"), std::string::npos) << ls;
  EXPECT_NE(ls.find("lrwxrwxrwx 0/0 10 squashfs-root/bin/dangling -> ../nowhere"), std::string::npos) << ls;
  EXPECT_NE(ls.find("-rw-r--r-- 0/0 0 squashfs-root/empty"), std::string::npos) << ls;
  // The hard link survives: both names share one inode once extracted.
  sh("unsquashfs -no-progress -d " + t / "x" + " " + t / "img.sqsh" + " >/dev/null");
  EXPECT_EQ(sh("stat -c %h " + t / "x/bin/b").out, "2\n");
}

TEST(ImportCli, BadFlagIsAUsageErrorAndWritesNothing) {
  Tmp t;
  make_rootfs(t / "root");
  Result r = sh(kBin + " import dir:" + t / "root" + " -o " + t / "out/img.sqsh --block-size 3K 2>&1");
  EXPECT_EQ(r.rc, 2);
  EXPECT_EQ(r.out, "--block-size: error: '3K' is not a power of two between 4K and 1M\n");
  EXPECT_FALSE(fs::exists(t / "out"));
}

TEST(ImportCli, ExistingOutputIsRefusedUntouchedWithoutForce) {
  Tmp t;
  make_rootfs(t / "root");
  std::ofstream(t / "img.sqsh") << "old";
  Result r = sh(kBin + " import dir:" + t / "root" + " -o " + t / "img.sqsh" + " 2>&1");
  EXPECT_EQ(r.rc, 2);
  EXPECT_EQ(r.out, t / "img.sqsh" + ": error: output exists\nhint: pass --force to replace it atomically\n");
  EXPECT_EQ(sh("cat " + t / "img.sqsh").out, "old");
  EXPECT_EQ(sh(kBin + " import dir:" + t / "root" + " -o " + t / "img.sqsh --force >/dev/null 2>&1").rc, 0);
  EXPECT_EQ(sh("unsquashfs -s " + t / "img.sqsh" + " >/dev/null 2>&1").rc, 0);
}

TEST(ImportCli, SigintMidImportExits130AndLeavesNoFileBehind) {
  Tmp t;
  sh("mkdir -p " + t / "root" + " && for i in $(seq 1 48); do head -c 4000000 /dev/urandom > " + t / "root" +
     "/f$i; done");
  fs::create_directories(t / "out");
  std::string cmd = kBin + " import dir:" + t / "root" + " -o " + t / "out/img.sqsh --compression xz --progress none";
  pid_t pid = ::fork();
  if (pid == 0) {
    ::freopen((t / "stderr").c_str(), "w", stderr);
    ::execl("/bin/sh", "sh", "-c", ("exec " + cmd).c_str(), nullptr);
    _exit(127);
  }
  // The partial output is an unnamed O_TMPFILE inode in out/ (a named
  // *.partial-* file where the file system has no O_TMPFILE): wait until the
  // process holds a file there.
  auto writing = [&] {
    std::error_code ec;
    for (const auto& fd : fs::directory_iterator("/proc/" + std::to_string(pid) + "/fd", ec)) {
      std::string to = fs::read_symlink(fd.path(), ec).string();
      if (!ec && to.rfind((t.p / "out").string() + "/", 0) == 0) return true;
    }
    return false;
  };
  for (int i = 0; i < 1000 && !writing(); ++i) ::usleep(10000);
  ASSERT_TRUE(writing()) << "the partial file never appeared";
  ::usleep(300000);
  ::kill(pid, SIGINT);
  int st = 0;
  ::waitpid(pid, &st, 0);
  ASSERT_TRUE(WIFEXITED(st));
  EXPECT_EQ(WEXITSTATUS(st), 130);
  EXPECT_TRUE(fs::is_empty(t.p / "out"));
  std::string err = sh("cat " + t / "stderr").out;
  EXPECT_NE(err.find("error: interrupted by SIGINT"), std::string::npos) << err;
}

// `unsquashfs -lls -UTC` lines as "DATE TIME PATH" (no mode, owner, size).
std::string times(const std::string& img) {
  return sh("unsquashfs -lls -UTC " + img + " | awk '$6 ~ /^squashfs-root/ {print $4, $5, $6}'").out;
}

TEST(ImportCli, DockerdImportRepeatsByteForByteWithoutSourceDateEpoch) {
  if (sh("docker info >/dev/null 2>&1").rc != 0) GTEST_SKIP() << "needs a running dockerd";
  Tmp t;
  // A tiny image from a rootfs, offline; its `created` is the import's time.
  const std::string tag = "trainimg-import-cli-repro:" + std::to_string(::getpid());
  Result mk = sh("mkdir -p " + t / "root/bin" + " && echo hi > " + t / "root/bin/hello" +
                 " && touch -d @1600000000 " + t / "root/bin/hello" + " " + t / "root/bin" + " && tar -C " +
                 t / "root" + " -cf " + t / "r.tar" + " . && docker import -c 'CMD [\"/bin/hello\"]' " +
                 t / "r.tar" + " " + tag + " >/dev/null && docker image inspect -f '{{.Created}}' " + tag);
  ASSERT_EQ(mk.rc, 0) << mk.out;
  struct Rmi {
    std::string tag;
    ~Rmi() { sh("docker rmi -f " + tag + " >/dev/null 2>&1"); }
  } rmi{tag};
  const std::string created =
      sh("date -u -d '" + mk.out.substr(0, mk.out.find('\n')) + "' '+%Y-%m-%d %H:%M'").out;
  ASSERT_EQ(created.size(), 17u) << created;
  const std::string at = created.substr(0, 16);

  const std::string import =
      "env -u SOURCE_DATE_EPOCH " + kBin + " import --progress none dockerd://" + tag + " -o ";
  ASSERT_EQ(sh(import + t / "a.sqsh" + " >/dev/null 2>&1").rc, 0);
  ::usleep(1100000);  // the second container is created in another second
  ASSERT_EQ(sh(import + t / "b.sqsh" + " >/dev/null 2>&1").rc, 0);
  EXPECT_EQ(sh("cmp " + t / "a.sqsh" + " " + t / "b.sqsh" + " 2>&1").out, "");
  std::string ls = times(t / "a.sqsh");
  for (const char* p : {"etc", "etc/hosts", "etc/rc", "etc/environment", "dev", "proc", "sys"})
    EXPECT_NE(ls.find(at + " squashfs-root/" + std::string(p) + "\n"), std::string::npos) << p << "\n" << ls;
  EXPECT_NE(ls.find("2020-09-13 12:26 squashfs-root/bin/hello\n"), std::string::npos) << ls;

  // SOURCE_DATE_EPOCH still decides when set.
  ASSERT_EQ(sh("SOURCE_DATE_EPOCH=1700000000 " + kBin + " import --progress none dockerd://" + tag + " -o " +
               t / "c.sqsh" + " >/dev/null 2>&1")
                .rc,
            0);
  ls = times(t / "c.sqsh");
  for (const char* p : {"etc", "etc/hosts", "etc/rc", "dev"})
    EXPECT_NE(ls.find("2023-11-14 22:13 squashfs-root/" + std::string(p) + "\n"), std::string::npos)
        << p << ls;
  EXPECT_NE(ls.find("2020-09-13 12:26 squashfs-root/bin/hello\n"), std::string::npos) << ls;
}

TEST(ImportCli, PyxisImporterGetPrintsThePathFirstAndReleaseIsIdempotent) {
  Tmp t;
  make_rootfs(t / "root");
  std::string env = "PYXIS_RUNTIME_PATH=" + t / "rt" + " SLURM_JOB_UID=1000 SLURM_JOB_ID=9 SLURM_STEP_ID=0 ";
  Result get = sh(env + kBin + " pyxis-importer get dir:" + t / "root" + " 2>/dev/null");
  ASSERT_EQ(get.rc, 0);
  EXPECT_EQ(get.out, t / "rt/1000/9.0.sqsh" + "\n");
  EXPECT_TRUE(fs::exists(t / "rt/1000/9.0.sqsh"));
  EXPECT_EQ(sh(env + kBin + " pyxis-importer release").rc, 0);
  EXPECT_FALSE(fs::exists(t / "rt/1000/9.0.sqsh"));
  EXPECT_EQ(sh(env + kBin + " pyxis-importer release").rc, 0);
  Result bad = sh("SLURM_STEP_ID=0 " + kBin + " pyxis-importer release 2>&1");
  EXPECT_EQ(bad.rc, 2);
  EXPECT_NE(bad.out.find("SLURM_JOB_ID: error: not set"), std::string::npos) << bad.out;
}

}  // namespace
