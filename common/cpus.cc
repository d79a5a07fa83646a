// SPDX-License-Identifier: GPL-3.0-or-later
#include "common/cpus.h"

#include <sched.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <thread>
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
  if (s.empty()) return std::nullopt;
  bool neg = s.front() == '-';
  if (neg) s.remove_prefix(1);
  if (s.empty() || s.size() > 18) return std::nullopt;
  int64_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return std::nullopt;
    v = v * 10 + (c - '0');
  }
  return neg ? -v : v;
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
    const size_t nl = proc_cgroup.find('\n');
    std::string_view line = proc_cgroup.substr(0, nl);
    proc_cgroup = nl == std::string_view::npos ? std::string_view() : proc_cgroup.substr(nl + 1);
    // "ID:CONTROLLERS:PATH"; the path may hold ':' itself.
    const size_t a = line.find(':');
    if (a == std::string_view::npos) continue;
    const size_t b = line.find(':', a + 1);
    if (b == std::string_view::npos) continue;
    const std::string_view id = line.substr(0, a), controllers = line.substr(a + 1, b - a - 1),
                           path = line.substr(b + 1);
    if (id == "0" && controllers.empty()) {
      walk_up(base, path, v2_quota, best);  // the unified hierarchy
      continue;
    }
    bool cpu = false;
    for (std::string_view rest = controllers; !rest.empty();) {
      const size_t c = rest.find(',');
      if (rest.substr(0, c) == "cpu") cpu = true;
      rest = c == std::string_view::npos ? std::string_view() : rest.substr(c + 1);
    }
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

}  // namespace trainimg
