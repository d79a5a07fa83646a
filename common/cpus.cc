// SPDX-License-Identifier: GPL-3.0-or-later
#include "common/cpus.h"

#include <pthread.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <thread>
#include <utility>
#include <vector>

namespace trainimg {
namespace {

namespace fs = std::filesystem;

std::optional<std::string> read_line(const fs::path& p) {
  std::ifstream in(p);
  std::string s;
  if (!in || !std::getline(in, s)) return std::nullopt;
  return s;
}

std::optional<int64_t> to_int(std::string_view s) {
  int64_t v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || s.empty()) return std::nullopt;
  return v;
}

// The next `sep`-separated field of `rest`, taken off its front.
std::string_view next_field(std::string_view& rest, char sep) {
  const size_t at = rest.find(sep);
  const std::string_view field = rest.substr(0, at);
  rest = at == std::string_view::npos ? std::string_view() : rest.substr(at + 1);
  return field;
}

// CPUs a quota of `quota` per `period` gives, rounded up; nullopt for none.
std::optional<unsigned> cpus_of(int64_t quota, int64_t period) {
  if (quota <= 0 || period <= 0) return std::nullopt;
  return static_cast<unsigned>(std::max<int64_t>(1, (quota + period - 1) / period));
}

// cgroup v2: "QUOTA PERIOD" or "max PERIOD".
std::optional<unsigned> v2_quota(const fs::path& dir) {
  auto line = read_line(dir / "cpu.max");
  if (!line) return std::nullopt;
  std::istringstream in(*line);
  std::string quota, period;
  if (!(in >> quota >> period)) return std::nullopt;
  auto q = to_int(quota), p = to_int(period);
  if (!q || !p) return std::nullopt;  // "max": none at this level
  return cpus_of(*q, *p);
}

// cgroup v1: cpu.cfs_quota_us (-1: none) per cpu.cfs_period_us.
std::optional<unsigned> v1_quota(const fs::path& dir) {
  auto quota = read_line(dir / "cpu.cfs_quota_us"), period = read_line(dir / "cpu.cfs_period_us");
  if (!quota || !period) return std::nullopt;
  auto q = to_int(*quota), p = to_int(*period);
  if (!q || !p) return std::nullopt;
  return cpus_of(*q, *p);
}

void tighten(std::optional<unsigned>& best, std::optional<unsigned> q) {
  if (q && (!best || *q < *best)) best = q;
}

// Every level from `hier_root`/`path` up to `hier_root`. Inside a container
// the path /proc/self/cgroup names may be the host's while the hierarchy
// mounted is the container's own (cgroup v1, no cgroup namespace): then the
// levels of the path that exist are read, down from the mount's root.
template <typename Read>
void walk_up(const fs::path& hier_root, std::string_view path, Read read, std::optional<unsigned>& best) {
  std::error_code ec;
  if (!fs::is_directory(hier_root, ec)) return;
  fs::path rel = fs::path(std::string(path)).relative_path().lexically_normal();
  if (rel == "." || (!rel.empty() && *rel.begin() == "..")) rel = fs::path();
  fs::path dir = hier_root / rel;
  if (!fs::is_directory(dir, ec)) dir = hier_root;
  for (;;) {
    tighten(best, read(dir));
    if (dir == hier_root || dir.native().size() <= hier_root.native().size()) break;
    dir = dir.parent_path();
  }
}

}  // namespace

std::optional<unsigned> cgroup_cpu_quota(std::string_view proc_cgroup, const std::string& root) {
  std::optional<unsigned> best;
  const fs::path base(root);
  while (!proc_cgroup.empty()) {
    std::string_view line = next_field(proc_cgroup, '\n');
    // "ID:CONTROLLERS:PATH"; the path may hold ':' itself.
    if (std::count(line.begin(), line.end(), ':') < 2) continue;
    const std::string_view id = next_field(line, ':');
    std::string_view controllers = next_field(line, ':');
    const std::string_view path = line;
    if (id == "0" && controllers.empty()) {
      walk_up(base, path, v2_quota, best);  // the unified hierarchy
      continue;
    }
    bool cpu = false;
    while (!controllers.empty()) cpu |= next_field(controllers, ',') == "cpu";
    if (!cpu) continue;
    // Where v1 mounts the cpu controller: alone or beside cpuacct.
    for (const char* mount : {"cpu", "cpu,cpuacct", "cpuacct,cpu"})
      walk_up(base / mount, path, v1_quota, best);
  }
  return best;
}

unsigned usable_cpus() {
  unsigned n = 0;
  // A mask as big as the kernel's (machines past 1,024 CPUs need more than a cpu_set_t).
  for (int cpus = 1024; cpus <= (1 << 20) && n == 0; cpus *= 2) {
    const size_t size = CPU_ALLOC_SIZE(cpus);
    std::unique_ptr<cpu_set_t, void (*)(cpu_set_t*)> set(CPU_ALLOC(cpus), [](cpu_set_t* s) { CPU_FREE(s); });
    if (!set) break;
    CPU_ZERO_S(size, set.get());
    if (sched_getaffinity(0, size, set.get()) == 0) {
      n = static_cast<unsigned>(CPU_COUNT_S(size, set.get()));
      break;
    }
    if (errno != EINVAL) break;
  }
  if (n == 0) n = std::max(1u, std::thread::hardware_concurrency());
  std::ifstream in("/proc/self/cgroup");
  std::stringstream text;
  text << in.rdbuf();
  if (auto q = cgroup_cpu_quota(text.str(), "/sys/fs/cgroup")) n = std::min(n, *q);
  return std::max(1u, n);
}

void name_this_thread(const char* name, bool only_if_unnamed) {
  // Settled: named, or the main thread, whose name is the process's (ps,
  // top) and is never renamed by the way. Asked once per block compressed,
  // so a settled thread costs no system call.
  static thread_local bool settled = false;
  if (only_if_unnamed && std::exchange(settled, true)) return;
  if (only_if_unnamed && gettid() == getpid()) return;
  settled = true;
  char buf[16] = {};
  std::string_view(name).copy(buf, sizeof buf - 1);
  pthread_setname_np(pthread_self(), buf);  // a failure leaves the old name: nothing to report
}

}  // namespace trainimg
