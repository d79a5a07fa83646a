// SPDX-License-Identifier: GPL-3.0-or-later
#include "builder/slurm/slurm.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <map>
#include <thread>

#include "common/error.h"
#include "inspect/host/fleet.h"
#include "inspect/host/probes.h"

namespace trainimg::builder {

namespace {

using host::ProbeResult;
using host::ProbeSpec;
using host::ProbeStatus;

ProbeResult run(std::vector<std::string> argv, double timeout_s) {
  ProbeSpec s;
  s.id = argv.at(0);
  for (const auto& a : argv) s.command += (s.command.empty() ? "" : " ") + a;
  s.argv = std::move(argv);
  host::ExecRunner r;
  return r.run(s, std::chrono::milliseconds(static_cast<long long>(timeout_s * 1000)));
}

std::string first_line(const std::string& s) {
  size_t b = s.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return {};
  size_t e = s.find('\n', b);
  std::string l = s.substr(b, e == std::string::npos ? std::string::npos : e - b);
  while (!l.empty() && (l.back() == '\r' || l.back() == ' ')) l.pop_back();
  return l;
}

std::vector<std::string> lines(const std::string& s) {
  std::vector<std::string> out;
  size_t pos = 0;
  while (pos < s.size()) {
    size_t nl = s.find('\n', pos);
    std::string l = s.substr(pos, nl == std::string::npos ? std::string::npos : nl - pos);
    if (!l.empty() && std::find(out.begin(), out.end(), l) == out.end()) out.push_back(l);
    if (nl == std::string::npos) break;
    pos = nl + 1;
  }
  return out;
}

ProbeResult checked(std::vector<std::string> argv, const char* what) {
  std::string cmd = argv.at(0);
  ProbeResult r = run(std::move(argv), 30);
  if (r.status == ProbeStatus::Absent)
    throw Error(cmd, "not found in PATH", "install slurm-client, or set PATH");
  if (r.status != ProbeStatus::Ok)
    throw Error(cmd, std::string(what) + " failed: " + first_line(r.error.empty() ? r.output : r.error),
                "is SLURM_CONF right and slurmctld up? (sinfo)");
  return r;
}

}  // namespace

std::vector<std::string> slurm_nodes(const std::string& partition, const std::string& hostlist) {
  std::vector<std::string> nodes;
  if (!hostlist.empty()) {
    nodes = lines(checked({"scontrol", "show", "hostnames", hostlist}, "scontrol show hostnames").output);
  } else {
    std::vector<std::string> argv = {"sinfo", "-h", "-N", "-o", "%N"};
    if (!partition.empty()) argv.insert(argv.end(), {"-p", partition});
    nodes = lines(checked(argv, "sinfo").output);
  }
  if (nodes.empty())
    throw Error(
        hostlist.empty() ? (partition.empty() ? "sinfo" : "--partition " + partition) : "--nodes " + hostlist,
        "no node to check");
  return nodes;
}

SlurmNodeState slurm_node_state(const std::string& node) {
  ProbeResult r = checked({"sinfo", "-h", "-N", "-n", node, "-o", "%T|%E"}, "sinfo");
  std::string l = first_line(r.output);
  SlurmNodeState s;
  size_t bar = l.find('|');
  s.state = l.substr(0, bar);
  if (bar != std::string::npos) s.reason = l.substr(bar + 1);
  if (s.reason == "none" || s.reason == "(null)") s.reason.clear();
  return s;
}

bool slurm_state_unusable(const std::string& state) {
  if (state.empty() || state.back() == '*') return true;  // not responding
  for (const char* bad : {"down", "drain", "fail", "future", "unknown", "maint", "reboot", "power"})
    if (state.find(bad) != std::string::npos) return true;
  return false;
}

std::vector<host::FleetNode> gather_profiles(const std::vector<std::string>& nodes, const GatherOptions& o) {
  // One sinfo for every state, so a dead or drained node costs no srun.
  std::map<std::string, std::pair<std::string, std::string>> states;
  {
    ProbeResult r = checked({"sinfo", "-h", "-N", "-o", "%N|%T|%E"}, "sinfo");
    for (const auto& l : lines(r.output)) {
      size_t a = l.find('|'), b = a == std::string::npos ? a : l.find('|', a + 1);
      if (b == std::string::npos) continue;
      std::string reason = l.substr(b + 1);
      states[l.substr(0, a)] = {l.substr(a + 1, b - a - 1), reason == "none" ? "" : reason};
    }
  }
  std::vector<host::FleetNode> out(nodes.size());
  std::atomic<size_t> next{0};
  int secs = std::max(1, static_cast<int>(std::ceil(o.timeout_s)));
  std::string limit =
      std::to_string(secs / 60) + ":" + (secs % 60 < 10 ? "0" : "") + std::to_string(secs % 60);
  if (secs < 60) limit = "1";  // Slurm's time limit is in whole minutes at least
  auto work = [&] {
    for (size_t i = next++; i < nodes.size(); i = next++) {
      const std::string& n = nodes[i];
      auto st = states.find(n);
      if (st == states.end()) {
        out[i] = host::unreachable_node(n, "sinfo does not list node " + n);
        continue;
      }
      if (slurm_state_unusable(st->second.first)) {
        out[i] = host::unreachable_node(
            n, "node is " + st->second.first +
                   (st->second.second.empty() ? "" : " (" + st->second.second + ")") + ": no task started");
        continue;
      }
      ProbeResult r =
          run({"srun", "-N1", "-n1", "-w", n, "--immediate=" + std::to_string(secs), "--time=" + limit, "-J",
               "trainimg-fleet", "-Q", o.binary, "host", "capture", "-o", "-"},
              o.timeout_s + 5);
      if (r.status == ProbeStatus::Timeout) {
        out[i] = host::unreachable_node(n, "no profile within " + std::to_string(secs) + " s (srun killed)");
        continue;
      }
      if (r.status != ProbeStatus::Ok) {
        std::string why = first_line(r.error);
        out[i] = host::unreachable_node(
            n, "srun exited " + std::to_string(r.exit_code) + (why.empty() ? "" : ": " + why));
        continue;
      }
      try {
        out[i] = host::fleet_node(n, host::parse_profile(r.output, n));
      } catch (const Error& e) {
        out[i] = host::unreachable_node(
            n, "unreadable profile: " + e.diagnostic().location() + ": " + e.diagnostic().message);
      }
    }
  };
  {
    std::vector<std::jthread> pool;
    int k = std::max(1, std::min<int>(o.parallel, static_cast<int>(nodes.size())));
    for (int t = 0; t < k; ++t) pool.emplace_back(work);
  }
  return out;
}

DrainOutcome drain_node(const std::string& node, const std::string& reason) {
  SlurmNodeState s = slurm_node_state(node);
  if (!s.reason.empty() && !s.reason.starts_with("trainimg:"))
    return {false, "kept the administrator's reason \"" + s.reason + "\""};
  if (s.reason == reason && s.state.find("drain") != std::string::npos) return {true, "already drained"};
  ProbeResult r = run({"scontrol", "update", "NodeName=" + node, "State=DRAIN", "Reason=" + reason}, 30);
  if (r.status != ProbeStatus::Ok)
    return {false, "scontrol update failed: " + first_line(r.error + r.output)};
  return {true, ""};
}

bool resume_node(const std::string& node) {
  SlurmNodeState s = slurm_node_state(node);
  if (!s.reason.starts_with("trainimg:")) return false;
  if (s.state.find("drain") == std::string::npos && s.state.find("down") == std::string::npos) return false;
  ProbeResult r = run({"scontrol", "update", "NodeName=" + node, "State=RESUME"}, 30);
  return r.status == ProbeStatus::Ok;
}

}  // namespace trainimg::builder
