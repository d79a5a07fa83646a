// SPDX-License-Identifier: GPL-3.0-or-later
// trainimg fleet check (issue 12): every node's profile through srun (or
// --profiles DIR), judged by inspect/host.h (judge_fleet); --drain through scontrol.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <memory>

#include "builder/slurm.h"
#include "cmd/command.h"
#include "common/atomic_file.h"
#include "common/error.h"
#include "common/report.h"
#include "inspect/host.h"

namespace trainimg::cmd {

namespace {

using namespace trainimg::host;

struct FleetArgs {
  std::string partition, nodes, expect, baseline, format = "text", output = "-", profiles;
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

}  // namespace

void setup_fleet(CLI::App& sub, Runner& run) {
  sub.require_subcommand(1, 1);
  auto a = std::make_shared<FleetArgs>();
  CLI::App* check =
      sub.add_subcommand("check", "Capture every node through srun, judge it, compare the nodes");
  check->add_option("--partition,-p", a->partition, "The nodes of this partition");
  check->add_option("--nodes,-w", a->nodes, "A Slurm hostlist, e.g. n[1-3]");
  check->add_option("--profiles", a->profiles, "Judge DIR/*.json (NODE.json each) instead of running srun");
  check->add_option("--expect", a->expect, "As for host check: gpus=N,efas=N,kernel=K,…");
  check->add_option("--baseline", a->baseline, "A reference node's profile (host check --baseline)");
  check->add_option("--format", a->format, "text, json, junit or sarif")
      ->check(CLI::IsMember({"text", "json", "junit", "sarif"}));
  check->add_option("-o,--output", a->output, "Write the report here (default: standard output)");
  check->add_option("--timeout", a->timeout,
                    "Per node: srun --immediate and time limit, seconds (default 60)");
  // The config only: --baseline here names a reference node's profile, and
  // the fleet reports have no place for suppressed findings.
  auto pf = std::make_shared<PolicyFlags>();
  check->add_option("--config", pf->config,
                    "Policy file (docs/policy.md); default: the nearest .trainimg.yaml");
  check->add_flag("--no-config", pf->no_config, "Use no policy file");
  check->add_flag("--drain", a->drain,
                  "Drain failing nodes: Reason=\"trainimg: RULE: MESSAGE\" (never an admin's)");
  run = [a, pf]() -> int {
    if (!(a->timeout > 0)) throw Error("--timeout", "must be a positive number of seconds");
    if (!a->partition.empty() && !a->nodes.empty())
      throw Error("--partition", "give --partition or --nodes, not both");
    if (!a->profiles.empty() && (a->drain || !a->partition.empty() || !a->nodes.empty()))
      throw Error("--profiles", "judges files offline: no --partition, --nodes or --drain with it");
    policy::Policy pol = load_policy(*pf);
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
    FleetResult r = judge_fleet(std::move(nodes), e, base ? &*base : nullptr, a->baseline);
    // Policy per node, before the reports and the drain decision see them.
    std::string today = policy::today_utc();
    // An expired ignore is about the config, not a node: said once, on stderr.
    std::vector<Diagnostic> expired;
    for (auto& n : r.nodes) {
      Report nr;
      nr.rules = fleet_rules();
      nr.findings = std::move(n.findings);
      policy::apply_policy(nr, pol, today);
      n.findings.clear();
      for (auto& d : nr.findings) {
        if (d.rule_id != policy::ignore_expired_rule().id)
          n.findings.push_back(std::move(d));
        else if (&n == &r.nodes.front())
          expired.push_back(std::move(d));
      }
    }
    for (const auto& d : expired) std::cerr << render_diagnostic(d, want_color(STDERR_FILENO));
    std::string text = a->format == "json"    ? render_fleet_json(r)
                       : a->format == "junit" ? render_fleet_junit(r)
                       : a->format == "sarif" ? render_fleet_sarif(r)
                                              : render_fleet_text(r);
    write_file_atomic(a->output, text);
    if (a->drain)
      for (const auto& n : r.nodes) {
        if (n.state != "ok") continue;  // no task ran there: nothing judged, nothing to drain for
        std::string reason = drain_reason(n);
        if (reason.empty()) continue;
        auto d = builder::drain_node(n.node, reason);
        std::cerr << "trainimg: "
                  << (d.drained ? "drained " + n.node + ": " + reason
                                : "did not drain " + n.node + ": " + d.why)
                  << "\n";
      }
    return r.failed() ? int(kExitFindings) : int(kExitOk);
  };
}

}  // namespace trainimg::cmd
