// SPDX-License-Identifier: GPL-3.0-or-later
// trainimg fleet check (issue 12): every node's profile through srun (or
// --profiles DIR), judged by inspect/host.h (judge_fleet), reported through
// the report path (FleetOutcome: per-node policy; --drain through scontrol).
#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <memory>

#include "builder/slurm.h"
#include "cmd/command.h"
#include "common/error.h"
#include "inspect/host.h"

namespace trainimg::cmd {

namespace {

using namespace trainimg::host;

struct FleetArgs {
  std::string partition, nodes, expect, baseline, profiles;
  double timeout = 60;
  bool drain = false;
};

// This binary's absolute path: srun runs the same file on every node (a
// shared file system, as the issue assumes).
std::string self_path() {
  std::error_code ec;
  auto p = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) throw Error("/proc/self/exe", "cannot find this binary's path: " + ec.message());
  return p.string();
}

std::vector<FleetNode> read_profiles(const std::string& dir) {
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

void setup_fleet_check(CLI::App& sub, Runner& run) {
  auto a = std::make_shared<FleetArgs>();
  sub.add_option("--partition,-p", a->partition, "The nodes of this partition");
  sub.add_option("--nodes,-w", a->nodes, "A Slurm hostlist, e.g. n[1-3]");
  sub.add_option("--profiles", a->profiles, "Judge DIR/*.json (NODE.json each) instead of running srun");
  sub.add_option("--expect", a->expect, "As for host check: gpus=N,efas=N,kernel=K,…");
  sub.add_option("--baseline", a->baseline, "A reference node's profile (host check --baseline)");
  // --baseline here names a reference node's profile, and the fleet
  // reports have no place for suppressed findings.
  auto rf = std::make_shared<ReportFlags>();
  ReportFlagSet set;
  set.baseline = set.write_baseline = set.show_suppressed = false;
  set.formats = "text, json, junit or sarif";
  add_report_flags(sub, rf, set);
  sub.add_option("--timeout", a->timeout, "Per node: srun --immediate and time limit, seconds (default 60)");
  sub.add_flag("--drain", a->drain,
               "Drain failing nodes: Reason=\"trainimg: RULE: MESSAGE\" (never an admin's)");
  run = [a, rf]() -> int {
    return run_check(*rf, [&](const policy::Policy&) {
      if (!(a->timeout > 0)) throw Error("--timeout", "must be a positive number of seconds");
      if (!a->partition.empty() && !a->nodes.empty())
        throw Error("--partition", "give --partition or --nodes, not both");
      if (!a->profiles.empty() && (a->drain || !a->partition.empty() || !a->nodes.empty()))
        throw Error("--profiles", "judges files offline: no --partition, --nodes or --drain with it");
      Expectations e = parse_expectations(a->expect);
      std::optional<HostProfile> base;
      if (!a->baseline.empty()) base = read_profile(a->baseline);
      std::vector<FleetNode> nodes;
      if (!a->profiles.empty()) {
        nodes = read_profiles(a->profiles);
      } else {
        builder::GatherOptions o;
        o.binary = self_path();
        o.timeout_s = a->timeout;
        nodes = builder::gather_profiles(builder::slurm_nodes(a->partition, a->nodes), o);
      }
      auto out = std::make_unique<FleetOutcome>(
          judge_fleet(std::move(nodes), e, base ? &*base : nullptr, a->baseline));
      out->drain = a->drain;
      return out;
    });
  };
}

const Command kFleetCommands[] = {
    {"check", "Capture every node through srun, judge it, compare the nodes", setup_fleet_check},
};

}  // namespace

void setup_fleet(CLI::App& sub, Runner& run) {
  run = add_commands(sub, kFleetCommands);
}

}  // namespace trainimg::cmd
