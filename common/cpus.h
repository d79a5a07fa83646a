// SPDX-License-Identifier: GPL-3.0-or-later
// How many CPUs this process may keep busy: what `--jobs 0` (every core) and
// the squashfs writer's default thread count mean. A Slurm job step sees the
// CPUs of its allocation through its affinity mask (task/affinity, cgroup
// cpusets), `taskset` and `numactl` likewise; a container or CI runner given
// `--cpus 4` (Docker, Kubernetes limits) sees every CPU of the host but gets
// four CPUs' worth of time through a cgroup quota. std::thread::
// hardware_concurrency() sees neither: on a 192-core node a job granted 8
// CPUs would start threads for 192.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace trainimg {

/// The CPUs in the calling thread's affinity mask, capped by the cgroup CPU
/// quota of the process (cgroup_cpu_quota() on /proc/self/cgroup and
/// /sys/fs/cgroup); at least 1.
unsigned usable_cpus();

/// The tightest CPU quota along the process's cgroup path, in CPUs rounded
/// up: cgroup v2's cpu.max ("QUOTA PERIOD" or "max PERIOD") and cgroup v1's
/// cpu.cfs_quota_us / cpu.cfs_period_us (-1: none), read from the cgroup
/// itself up to the root of its hierarchy under `root`. `proc_cgroup` is the
/// text of /proc/self/cgroup. nullopt when no level sets one (or nothing can
/// be read: no cgroup file system, another layout).
std::optional<unsigned> cgroup_cpu_quota(std::string_view proc_cgroup, const std::string& root);

/// Names the calling thread (what `top -H`, `ps -L` and /proc/PID/task/*/comm
/// show; at most 15 bytes are kept), so that a profile of an import says
/// which threads were busy: "ti-layer" reads a layer, "ti-compress"
/// compresses blocks, "ti-write" writes behind. With `only_if_unnamed`, a
/// thread that was named already keeps its name (a block processor's worker
/// inherits its creator's name but was not named itself) and the main
/// thread (whose name is the process's) is not renamed.
void name_this_thread(const char* name, bool only_if_unnamed = false);

}  // namespace trainimg
