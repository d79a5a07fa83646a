// SPDX-License-Identifier: GPL-3.0-or-later
// Golden bytes of enroot's four files. The expected texts were checked once
// against enroot's own `docker::configure` (src/docker.sh, run with jq on the
// same config); bash_quote is checked against the real bash on this machine.
#include "builder/import/enroot_config.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <string>
#include <vector>

namespace trainimg::builder {
namespace {

inspect::ImageConfig ngc_like() {
  inspect::ImageConfig c;
  c.env = {"PATH=/usr/local/nvidia/bin:/usr/local/cuda/bin:/usr/bin:/bin",
           "NCCL_VERSION=2.19.3", "LD_LIBRARY_PATH=${LD_LIBRARY_PATH}:/opt/amazon/efa/lib"};
  c.entrypoint = {"/opt/nvidia/nvidia_entrypoint.sh"};
  c.cmd = {};
  c.workdir = "/workspace";
  c.labels = {{"com.nvidia.build.id", "83371046"}, {"maintainer", "NVIDIA\nCORPORATION"}};
  c.volumes = {"/data", "/cache", "/data"};
  return c;
}

TEST(EnrootConfig, EnvironmentIsEnvVerbatimInImageOrder) {
  EXPECT_EQ(enroot_environment(ngc_like()),
            "PATH=/usr/local/nvidia/bin:/usr/local/cuda/bin:/usr/bin:/bin\n"
            "NCCL_VERSION=2.19.3\n"
            "LD_LIBRARY_PATH=${LD_LIBRARY_PATH}:/opt/amazon/efa/lib\n");
  EXPECT_EQ(enroot_environment({}), "");
}

TEST(EnrootConfig, RcWithEntrypointLabelsAndWorkdir) {
  EXPECT_EQ(enroot_rc(ngc_like(), "dockerd://nvcr.io/nvidia/pytorch:24.01-py3"),
            "# enroot-provenance: dockerd://nvcr.io/nvidia/pytorch:24.01-py3\n"
            "# com.nvidia.build.id 83371046\n"
            "# maintainer NVIDIA CORPORATION\n"
            "\n"
            "mkdir -p \"/workspace\" 2> /dev/null\n"
            "cd \"/workspace\" && unset OLDPWD || exit 1\n"
            "\n"
            "if [ -s /etc/rc.local ]; then\n"
            "    . /etc/rc.local\n"
            "fi\n"
            "\n"
            "if [ $# -gt 0 ]; then\n"
            "    exec '/opt/nvidia/nvidia_entrypoint.sh' \"$@\"\n"
            "else\n"
            "    exec '/opt/nvidia/nvidia_entrypoint.sh' \n"
            "fi\n");
}

TEST(EnrootConfig, RcDefaultsToBinShAndRootWorkdirWithEnrootsDoubleSpaces) {
  EXPECT_EQ(enroot_rc({}, "docker-archive:/tmp/img.tar"),
            "# enroot-provenance: docker-archive:/tmp/img.tar\n"
            "\n"
            "mkdir -p \"/\" 2> /dev/null\n"
            "cd \"/\" && unset OLDPWD || exit 1\n"
            "\n"
            "if [ -s /etc/rc.local ]; then\n"
            "    . /etc/rc.local\n"
            "fi\n"
            "\n"
            "if [ $# -gt 0 ]; then\n"
            "    exec  \"$@\"\n"
            "else\n"
            "    exec  '/bin/sh'\n"
            "fi\n");
}

TEST(EnrootConfig, RcQuotesEntrypointAndCmdWords) {
  inspect::ImageConfig c;
  c.entrypoint = {"/bin/sh", "-c"};
  c.cmd = {"echo 'hi' $HOME", ""};
  std::string rc = enroot_rc(c, "dir:/r");
  EXPECT_NE(rc.find("    exec '/bin/sh' '-c' \"$@\"\n"), std::string::npos) << rc;
  EXPECT_NE(rc.find("    exec '/bin/sh' '-c' 'echo '\\''hi'\\'' $HOME' ''\n"), std::string::npos) << rc;
}

TEST(EnrootConfig, WorkdirIsFirstLineWithBlanksTrimmedLikeBashRead) {
  inspect::ImageConfig c;
  c.workdir = "  /w d\t\n/second";
  EXPECT_EQ(enroot_workdir(c), "/w d");
  c.workdir = " \t";
  EXPECT_EQ(enroot_workdir(c), "/");
}

TEST(EnrootConfig, RcLocalIsTwoCommentLines) {
  EXPECT_EQ(enroot_rc_local(),
            "# This file is sourced by /etc/rc when the container starts.\n"
            "# It can be used to manipulate the entrypoint or the command of the container.\n");
}

TEST(EnrootConfig, FstabHasOneSortedLinePerVolume) {
  EXPECT_EQ(enroot_fstab(ngc_like()),
            "${ENROOT_ROOTFS}/cache /cache none x-create=dir,bind,rw,nosuid,nodev\n"
            "${ENROOT_ROOTFS}/data /data none x-create=dir,bind,rw,nosuid,nodev\n");
  EXPECT_EQ(enroot_fstab({}), "");
}

// What the real bash prints for "${1@Q}" (the machine's bash, UTF-8 locale).
std::string real_bash_quote(const std::string& word) {
  std::array<int, 2> p{};
  if (pipe(p.data()) != 0) return "<pipe failed>";
  pid_t pid = fork();
  if (pid == 0) {
    dup2(p[1], 1);
    close(p[0]);
    setenv("LC_ALL", "C.UTF-8", 1);
    execlp("bash", "bash", "-c", "printf %s \"${1@Q}\"", "bash", word.c_str(), nullptr);
    _exit(127);
  }
  close(p[1]);
  std::string out;
  char buf[256];
  ssize_t n;
  while ((n = read(p[0], buf, sizeof buf)) > 0) out.append(buf, size_t(n));
  close(p[0]);
  int st = 0;
  waitpid(pid, &st, 0);
  return out;
}

TEST(EnrootConfig, BashQuoteMatchesRealBashAtQuoting) {
  const std::vector<std::string> words = {
      "plain", "it's", "a b", "", "x\ny", "tab\tx", "$HOME", "\xc3\xa9", "\x01", "\\", "a\"b", "!", "~",
      "\x1b[0m", "\x7f", "\xff", "\xc3", "\xc3(", "\xf0\x9f\x98\x80", "\xed\xa0\x80", "\xc2\x85",
      "\xe2\x80\x8b", "it's\n", "a\\b'c\r"};
  for (const auto& w : words) EXPECT_EQ(bash_quote(w), real_bash_quote(w)) << "word: " << w;
}

}  // namespace
}  // namespace trainimg::builder
