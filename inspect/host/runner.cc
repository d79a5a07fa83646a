// SPDX-License-Identifier: GPL-3.0-or-later
#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>
#include <memory>

#include "common/fd.h"
#include "inspect/host/probes.h"

extern char** environ;

namespace trainimg::host {

namespace {

using Clock = std::chrono::steady_clock;

double since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

bool executable(const std::string& p) {
  struct stat st;
  return ::stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(p.c_str(), X_OK) == 0;
}

// PATH first (what the user would get), then the spec's fallbacks: sbin and
// /opt/amazon/efa/bin are often missing from a non-root PATH.
std::string resolve(const ProbeSpec& spec) {
  const std::string& name = spec.argv.at(0);
  if (name.find('/') != std::string::npos) return executable(name) ? name : "";
  const char* env = std::getenv("PATH");
  std::string path = env && *env ? env : "/usr/local/bin:/usr/bin:/bin";
  size_t pos = 0;
  while (pos <= path.size()) {
    size_t colon = path.find(':', pos);
    std::string dir = path.substr(pos, colon == std::string::npos ? std::string::npos : colon - pos);
    if (!dir.empty() && executable(dir + "/" + name)) return dir + "/" + name;
    if (colon == std::string::npos) break;
    pos = colon + 1;
  }
  for (const auto& f : spec.fallbacks)
    if (executable(f)) return f;
  return "";
}

struct SpawnActions {
  posix_spawn_file_actions_t a;
  SpawnActions() { posix_spawn_file_actions_init(&a); }
  ~SpawnActions() { posix_spawn_file_actions_destroy(&a); }
};
struct SpawnAttr {
  posix_spawnattr_t a;
  SpawnAttr() { posix_spawnattr_init(&a); }
  ~SpawnAttr() { posix_spawnattr_destroy(&a); }
};

ProbeResult run_exec(const ProbeSpec& spec, std::chrono::milliseconds timeout) {
  ProbeResult r;
  auto t0 = Clock::now();
  std::string exe = resolve(spec);
  if (exe.empty()) {
    r.status = ProbeStatus::Absent;
    r.error = "command not found: " + spec.argv.at(0);
    return r;
  }
  int out_p[2], err_p[2];
  if (::pipe2(out_p, O_CLOEXEC) != 0) {
    r.status = ProbeStatus::Failed;
    r.error = std::string("pipe: ") + std::strerror(errno);
    return r;
  }
  UniqueFd out_r(out_p[0]), out_w(out_p[1]);
  if (::pipe2(err_p, O_CLOEXEC) != 0) {
    r.status = ProbeStatus::Failed;
    r.error = std::string("pipe: ") + std::strerror(errno);
    return r;
  }
  UniqueFd err_r(err_p[0]), err_w(err_p[1]);

  SpawnActions fa;
  posix_spawn_file_actions_addopen(&fa.a, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&fa.a, out_w.get(), 1);
  posix_spawn_file_actions_adddup2(&fa.a, err_w.get(), 2);
  SpawnAttr attr;
  // Own process group, so a timeout kills the probe and anything it started.
  posix_spawnattr_setflags(&attr.a, POSIX_SPAWN_SETPGROUP);
  posix_spawnattr_setpgroup(&attr.a, 0);

  std::vector<std::string> env_store;
  for (char** e = environ; e && *e; ++e) {
    std::string_view kv = *e;
    if (kv.starts_with("LC_ALL=") || kv.starts_with("LANG=") || kv.starts_with("LANGUAGE=")) continue;
    env_store.emplace_back(kv);
  }
  env_store.emplace_back("LC_ALL=C");
  env_store.emplace_back("SYSTEMD_PAGER=");
  std::vector<char*> envp;
  for (auto& s : env_store) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::vector<std::string> args = spec.argv;
  std::vector<char*> argv;
  for (auto& s : args) argv.push_back(s.data());
  argv.push_back(nullptr);

  pid_t pid = 0;
  int rc = ::posix_spawn(&pid, exe.c_str(), &fa.a, &attr.a, argv.data(), envp.data());
  out_w.reset();
  err_w.reset();
  if (rc != 0) {
    r.status = rc == ENOENT ? ProbeStatus::Absent : ProbeStatus::Failed;
    r.error = "cannot run " + exe + ": " + std::strerror(rc);
    return r;
  }

  auto deadline = t0 + timeout;
  bool timed_out = false;
  pollfd fds[2] = {{out_r.get(), POLLIN, 0}, {err_r.get(), POLLIN, 0}};
  char buf[65536];
  while (fds[0].fd >= 0 || fds[1].fd >= 0) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) {
      timed_out = true;
      break;
    }
    int n = ::poll(fds, 2, static_cast<int>(left));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) break;
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      ssize_t got = ::read(fds[i].fd, buf, sizeof buf);
      if (got > 0)
        (i == 0 ? r.output : r.error).append(buf, static_cast<size_t>(got));
      else if (got == 0 || errno != EINTR)
        fds[i].fd = -1;
    }
  }
  if (timed_out) ::kill(-pid, SIGKILL);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  r.seconds = since(t0);
  if (timed_out) {
    r.status = ProbeStatus::Timeout;
    r.exit_code = -1;
    r.error += (r.error.empty() ? "" : "\n") + std::string("killed after ") +
               std::to_string(timeout.count() / 1000.0).substr(0, 5) + " s";
    return r;
  }
  if (WIFEXITED(status)) {
    r.exit_code = WEXITSTATUS(status);
    bool answered = spec.nonzero_ok && !r.output.empty();
    r.status = (r.exit_code == 0 || answered) ? ProbeStatus::Ok : ProbeStatus::Failed;
  } else {
    r.exit_code = 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
    r.status = ProbeStatus::Failed;
    r.error += std::string("killed by signal ") + std::to_string(r.exit_code - 128);
  }
  return r;
}

bool read_whole(const std::string& path, std::string& out, std::string& err) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    err = path + ": " + std::strerror(errno);
    return false;
  }
  out.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  return true;
}

ProbeResult run_builtin(const ProbeSpec& spec) {
  ProbeResult r;
  auto t0 = Clock::now();
  switch (spec.kind) {
    case ProbeSpec::Kind::ReadFile: {
      if (::access(spec.path.c_str(), F_OK) != 0) {
        r.status = ProbeStatus::Absent;
        r.error = spec.path + ": " + std::strerror(errno);
        break;
      }
      r.status = read_whole(spec.path, r.output, r.error) ? ProbeStatus::Ok : ProbeStatus::Failed;
      break;
    }
    case ProbeSpec::Kind::ListDir: {
      std::unique_ptr<DIR, int (*)(DIR*)> d(::opendir(spec.path.c_str()), ::closedir);
      if (!d) {
        r.status = errno == ENOENT ? ProbeStatus::Absent : ProbeStatus::Failed;
        r.error = spec.path + ": " + std::strerror(errno);
        break;
      }
      std::vector<std::string> names;
      while (dirent* e = ::readdir(d.get()))
        if (e->d_name[0] != '.') names.emplace_back(e->d_name);
      std::sort(names.begin(), names.end());
      for (const auto& n : names) r.output += n + "\n";
      r.status = ProbeStatus::Ok;
      break;
    }
    case ProbeSpec::Kind::Memlock: {
      rlimit rl{};
      if (::getrlimit(RLIMIT_MEMLOCK, &rl) != 0) {
        r.status = ProbeStatus::Failed;
        r.error = std::string("getrlimit: ") + std::strerror(errno);
        break;
      }
      // `ulimit -l` prints the soft limit in KiB.
      r.output = rl.rlim_cur == RLIM_INFINITY ? "unlimited\n" : std::to_string(rl.rlim_cur / 1024) + "\n";
      r.status = ProbeStatus::Ok;
      break;
    }
    case ProbeSpec::Kind::Hostname: {
      char name[256] = {};
      if (::gethostname(name, sizeof name - 1) != 0) {
        r.status = ProbeStatus::Failed;
        r.error = std::string("gethostname: ") + std::strerror(errno);
        break;
      }
      r.output = std::string(name) + "\n";
      r.status = ProbeStatus::Ok;
      break;
    }
    case ProbeSpec::Kind::Exec: break;
  }
  r.seconds = since(t0);
  return r;
}

}  // namespace

ProbeResult ExecRunner::run(const ProbeSpec& spec, std::chrono::milliseconds timeout) {
  if (spec.kind == ProbeSpec::Kind::Exec) return run_exec(spec, timeout);
  return run_builtin(spec);
}

ProbeResult ReplayRunner::run(const ProbeSpec& spec, std::chrono::milliseconds) {
  ProbeResult r;
  std::string base = dir_ + "/" + spec.id;
  std::string err;
  if (read_whole(base, r.output, err)) {
    r.status = ProbeStatus::Ok;
  } else if (read_whole(base + ".failed", r.error, err)) {
    r.status = ProbeStatus::Failed;
    r.exit_code = 1;
  } else if (read_whole(base + ".timeout", r.error, err)) {
    r.status = ProbeStatus::Timeout;
    r.exit_code = -1;
  } else {
    r.status = ProbeStatus::Absent;
    r.error = "not in bundle: " + spec.id;
  }
  return r;
}

}  // namespace trainimg::host
