// SPDX-License-Identifier: GPL-3.0-or-later
// This node's profile for `host capture|check` and the Slurm node gate
// (builder/slurm/slurm.h): bundle replay, the boot capture's freshness, drain and
// resume; and fleet check's inputs (a directory of profiles, this binary).
#include <sys/stat.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <ostream>

#include "builder/slurm/slurm.h"
#include "common/error.h"
#include "inspect/host.h"
#include "inspect/host/fleet.h"
#include "inspect/host/probes.h"

namespace trainimg::builder {

using namespace trainimg::host;

namespace {

std::chrono::milliseconds timeout_of(double seconds) {
  if (!(seconds > 0)) throw Error("--timeout", "the probe timeout must be a positive number of seconds");
  return std::chrono::milliseconds(static_cast<long long>(seconds * 1000));
}

// TRAINIMG_HOST_BUNDLE_DIR=DIR: "live" probing replays DIR/$SLURMD_NODENAME
// (how tests give each Slurm node its own recorded outputs, and how a site
// replays a fleet's bundles). Empty: really probe.
std::string replay_dir() {
  const char* dir = std::getenv("TRAINIMG_HOST_BUNDLE_DIR");
  if (!dir || !*dir) return {};
  const char* node = std::getenv("SLURMD_NODENAME");
  if (!node || !*node)
    throw Error("TRAINIMG_HOST_BUNDLE_DIR", "set, but SLURMD_NODENAME is not: no node bundle to replay",
                "run under srun / a Slurm prolog, or unset TRAINIMG_HOST_BUNDLE_DIR");
  std::string d = std::string(dir) + "/" + node;
  struct stat st;
  if (::stat(d.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
    throw Error(d, "TRAINIMG_HOST_BUNDLE_DIR has no bundle for node " + std::string(node));
  return d;
}

std::unique_ptr<ProbeRunner> live_runner(std::string& source) {
  std::string dir = replay_dir();
  if (dir.empty()) {
    source = "live";
    return std::make_unique<ExecRunner>();
  }
  source = "bundle:" + dir;
  return std::make_unique<ReplayRunner>(dir);
}

// The Slurm node gate's profile: the boot capture (TRAINIMG_HOST_PROFILE,
// default /run/trainimg/host.json) when this boot and kernel are the ones
// it recorded, with the fast probes re-run; otherwise the fast probes
// alone (every other check is then "cannot tell"). `why` says which.
HostProfile gate_profile(double timeout_s, std::string& why) {
  const char* env = std::getenv("TRAINIMG_HOST_PROFILE");
  std::string path = env && *env ? env : "/run/trainimg/host.json";
  std::string source;
  auto runner = live_runner(source);
  HostProfile boot;
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) {
    why = "no boot capture at " + path + ": fast probes only";
  } else {
    boot = read_profile(path);
  }
  HostProfile p = refresh_fast(*runner, timeout_of(timeout_s), boot, source);
  if (why.empty()) {
    if (!boot.boot_id.empty() && boot.boot_id != p.boot_id)
      why = "boot capture " + path + " is from another boot";
    else if (boot.kernel != p.kernel)
      why = "boot capture " + path + " has kernel " + boot.kernel.value_or("?") + ", running " +
            p.kernel.value_or("?");
    if (!why.empty()) {
      why += ": fast probes only";
      p = refresh_fast(*runner, timeout_of(timeout_s), HostProfile{}, source);
    }
  }
  return p;
}

}  // namespace

HostProfile capture_node(const std::string& from, double timeout_s) {
  if (!from.empty()) {
    struct stat st;
    if (::stat(from.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
      throw Error(from, "not a bundle directory", "write one with: trainimg host bundle DIR");
    ReplayRunner runner(from);
    return capture(runner, timeout_of(timeout_s), "bundle:" + from);
  }
  std::string source;
  auto runner = live_runner(source);
  return capture(*runner, timeout_of(timeout_s), source);
}

HostProfile capture_live(double timeout_s) {
  ExecRunner runner;
  return capture(runner, timeout_of(timeout_s), "live");
}

Report check_node(const std::string& file, const HostExpectations& e, const std::string& reference,
                  double timeout_s) {
  HostProfile p = file.empty() ? capture_node("", timeout_s) : read_profile(file);
  std::optional<HostProfile> base;
  if (!reference.empty()) base = read_profile(reference);
  std::string where = !file.empty() ? file : p.hostname.empty() ? "live" : p.hostname;
  return host_check_report(p, e, base ? &*base : nullptr, where, reference);
}

std::string capture_summary(const HostProfile& p) {
  auto missing = unanswered_probes(p);
  std::string s = "trainimg: captured " + std::to_string(p.probes.size()) + " probes on " +
                  (p.hostname.empty() ? "?" : p.hostname) + ": " +
                  std::to_string(p.probes.size() - missing.size()) + " ok";
  if (!missing.empty()) {
    s += ", " + std::to_string(missing.size()) + " not answered:";
    for (const auto& m : missing) s += " " + m;
  }
  return s + "\n";
}

bool run_node_gate(const NodeGateOptions& o, const policy::Policy& pol, std::ostream& err) {
  std::string why;
  HostProfile p = gate_profile(std::min(o.timeout_s, 2.0), why);
  const char* n = std::getenv("SLURMD_NODENAME");
  std::string node = n && *n ? n : p.hostname;
  HostCheckResult res = check_host(p, o.expect, nullptr, node);
  Report gate;
  gate.rules = profile_rules();
  gate.findings = std::move(res.findings);
  policy::apply_policy(gate, pol, policy::today_utc());
  auto errors = error_lines(gate.findings);
  if (!why.empty()) err << "trainimg: note: " << why << "\n";
  for (const auto& l : errors) err << l << "\n";
  if (o.drain) {
    if (!errors.empty()) {
      auto d = drain_node(node, errors.front());
      err << "trainimg: " << (d.drained ? "drained " + node : "did not drain " + node + ": " + d.why) << "\n";
    } else if (resume_node(node)) {
      err << "trainimg: resumed " << node << " (its trainimg drain reason is gone)\n";
    }
  }
  return errors.empty();
}

std::string self_path() {
  std::error_code ec;
  auto p = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) throw Error("/proc/self/exe", "cannot find this binary's path: " + ec.message());
  return p.string();
}

std::vector<FleetNode> read_fleet_profiles(const std::string& dir) {
  struct stat st;
  if (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
    throw Error(dir, "not a directory of profiles",
                "one NODE.json per node, written by trainimg host capture");
  std::vector<std::string> files;
  for (const auto& e : std::filesystem::directory_iterator(dir))
    if (e.path().extension() == ".json" && e.is_regular_file()) files.push_back(e.path().string());
  std::sort(files.begin(), files.end());
  if (files.empty()) throw Error(dir, "no *.json profile in the directory");
  std::vector<FleetNode> nodes;
  nodes.reserve(files.size());
  for (const auto& f : files)
    nodes.push_back(fleet_node(std::filesystem::path(f).stem().string(), read_profile(f)));
  return nodes;
}

std::vector<FleetNode> gather_fleet(const FleetInputs& in) {
  if (!(in.timeout_s > 0)) throw Error("--timeout", "must be a positive number of seconds");
  if (!in.partition.empty() && !in.nodes.empty())
    throw Error("--partition", "give --partition or --nodes, not both");
  if (!in.profiles.empty() && (in.drain || !in.partition.empty() || !in.nodes.empty()))
    throw Error("--profiles", "judges files offline: no --partition, --nodes or --drain with it");
  if (!in.profiles.empty()) return read_fleet_profiles(in.profiles);
  GatherOptions o;
  o.binary = self_path();
  o.timeout_s = in.timeout_s;
  return gather_profiles(slurm_nodes(in.partition, in.nodes), o);
}

}  // namespace trainimg::builder
