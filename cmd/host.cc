// SPDX-License-Identifier: GPL-3.0-or-later
// trainimg host capture|bundle|check|diff (issue 6, seed 000 host validation).
#include "inspect/host.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <map>
#include <memory>

#include "builder/slurm.h"
#include "cmd/command.h"
#include "common/atomic_file.h"
#include "common/error.h"
#include "common/report.h"

namespace trainimg::cmd {

namespace {

using namespace trainimg::host;

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

HostProfile capture_profile(const std::string& from, double timeout_s) {
  if (!from.empty()) {
    struct stat st;
    if (::stat(from.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
      throw Error(from, "not a bundle directory", "write one with: trainimg host bundle DIR");
    ReplayRunner runner(from);
    HostProfile p = capture(runner, timeout_of(timeout_s), "bundle:" + from);
    return p;
  }
  std::string source;
  auto runner = live_runner(source);
  return capture(*runner, timeout_of(timeout_s), source);
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

// stderr summary of a capture. Exit 0 once the profile is written: a probe
// that did not answer is a recorded fact (its status), judged by `host check`.
int summarize(const HostProfile& p) {
  auto missing = unanswered_probes(p);
  std::cerr << "trainimg: captured " << p.probes.size() << " probes on "
            << (p.hostname.empty() ? "?" : p.hostname) << ": " << p.probes.size() - missing.size() << " ok";
  if (!missing.empty()) {
    std::cerr << ", " << missing.size() << " not answered:";
    for (const auto& m : missing) std::cerr << " " << m;
  }
  std::cerr << "\n";
  return kExitOk;
}

void setup_host_capture(CLI::App& sub, Runner& run) {
  auto out = std::make_shared<std::string>("-");
  auto from = std::make_shared<std::string>();
  auto timeout = std::make_shared<double>(10);
  sub.add_option("-o,--output", *out, "Write the trainimg.host/v1 profile here (default: standard output)");
  sub.add_option("--from", *from, "Build the profile from a bundle directory instead of running the probes");
  sub.add_option("--timeout", *timeout, "Per-probe timeout in seconds (default 10)");
  run = [out, from, timeout] {
    HostProfile p = capture_profile(*from, *timeout);
    write_file_atomic(*out, serialize(p));
    return summarize(p);
  };
}

void setup_host_bundle(CLI::App& sub, Runner& run) {
  auto dir = std::make_shared<std::string>();
  auto timeout = std::make_shared<double>(10);
  sub.add_option("DIR", *dir, "Directory to write the raw probe outputs to (created if missing)")->required();
  sub.add_option("--timeout", *timeout, "Per-probe timeout in seconds (default 10)");
  run = [dir, timeout] {
    ExecRunner runner;
    HostProfile p = capture(runner, timeout_of(*timeout), "live");
    write_bundle(p, *dir);
    return summarize(p);
  };
}

void setup_host_check(CLI::App& sub, Runner& run) {
  auto file = std::make_shared<std::string>();
  auto live = std::make_shared<bool>(false);
  auto expect = std::make_shared<std::string>();
  auto baseline = std::make_shared<std::string>();
  auto timeout = std::make_shared<double>(10);
  auto strict = std::make_shared<bool>(false);
  sub.add_option("HOST.json", *file, "A profile written by `trainimg host capture`");
  sub.add_flag("--live", *live, "Capture this node now instead of reading a profile");
  sub.add_option(
      "--expect", *expect,
      "gpus=N,efas=N,gpu-model=NAME,efa-driver>=V,kernel=K,nvidia-fs>=V,lustre=yes,gds=yes,lnet-efas=N,"
      "fabric-manager=yes,gdrcopy=yes,nvme-mount=yes,memlock=yes");
  sub.add_option(
      "--baseline", *baseline,
      "A reference node's profile (trainimg.host/v1: kernel changed, versions drifted), or accepted "
      "findings (trainimg.baseline/v1: report and fail only on new ones)");
  auto rf = std::make_shared<ReportFlags>();
  ReportFlagSet set;
  set.baseline = false;  // declared above: a profile or accepted findings
  add_report_flags(sub, rf, set);
  auto slurm = std::make_shared<bool>(false);
  auto drain = std::make_shared<bool>(false);
  sub.add_flag("--slurm", *slurm,
               "Node gate (Prolog / HealthCheckProgram): with --live, the boot capture plus the fast probes; "
               "`trainimg: RULE: MESSAGE` per error on stderr, nothing on stdout");
  sub.add_flag(
      "--drain", *drain,
      "With --slurm: drain this node (SLURMD_NODENAME) on an error, resume it when clean if trainimg "
      "drained it");
  sub.add_flag("--strict", *strict,
               "An input that was not captured (probe absent) fails its check instead of a note");
  sub.add_option("--timeout", *timeout, "Per-probe timeout in seconds with --live (default 10)");
  run = [=] {
    // Usage first, in this order, before anything is read.
    auto expectations = [&] {
      if (file->empty() == !*live)
        throw Error("host check", "give either a profile (HOST.json) or --live",
                    "trainimg host check HOST.json");
      Expectations e = parse_expectations(*expect);
      e.strict = *strict;
      if (*drain && !*slurm)
        throw Error("--drain", "only with --slurm", "trainimg host check --live --slurm --drain");
      return e;
    };
    if (*slurm) {
      ReportPlan plan = plan_report(*rf);
      Expectations e = expectations();
      if (!*live) throw Error("--slurm", "the node gate judges this node: add --live");
      std::string why;
      HostProfile p = gate_profile(std::min(*timeout, 2.0), why);
      const char* n = std::getenv("SLURMD_NODENAME");
      std::string node = n && *n ? n : p.hostname;
      HostCheckResult res = check_host(p, e, nullptr, node);
      Report gate;
      gate.rules = profile_rules();
      gate.findings = std::move(res.findings);
      policy::apply_policy(gate, plan.policy, policy::today_utc());
      auto errors = error_lines(gate.findings);
      if (!why.empty()) std::cerr << "trainimg: note: " << why << "\n";
      for (const auto& l : errors) std::cerr << l << "\n";
      if (*drain) {
        if (!errors.empty()) {
          auto d = builder::drain_node(node, errors.front());
          std::cerr << "trainimg: "
                    << (d.drained ? "drained " + node : "did not drain " + node + ": " + d.why) << "\n";
        } else if (builder::resume_node(node)) {
          std::cerr << "trainimg: resumed " << node << " (its trainimg drain reason is gone)\n";
        }
      }
      return errors.empty() ? int(kExitOk) : int(kExitFindings);
    }
    return run_check(*rf, [&](const policy::Policy&) {
      // --baseline names a reference node's profile, or accepted findings:
      // the file's schema says which.
      std::string reference = *baseline, findings_baseline;
      if (!baseline->empty() && policy::json_schema_of(*baseline) == policy::kBaselineSchema) {
        findings_baseline = *baseline;
        reference.clear();
      }
      Expectations e = expectations();
      HostProfile p = *live ? capture_profile("", *timeout) : read_profile(*file);
      std::string where = *live ? (p.hostname.empty() ? "live" : p.hostname) : *file;
      std::optional<HostProfile> base;
      if (!reference.empty()) base = read_profile(reference);
      HostCheckResult res = check_host(p, e, base ? &*base : nullptr, where, reference);
      Report r;
      r.kind = "host";
      r.inputs = {where};
      if (base) r.inputs.push_back(reference);
      r.rules = profile_rules();
      r.findings = std::move(res.findings);
      r.notes = std::move(res.notes);
      r.text_facts.emplace_back("host", p.hostname.empty() ? "?" : p.hostname);
      for (auto& [k, v] : fact_rows(p))
        if (k != "held_packages" && k != "infiniband_devices" && k != "fi_info_domains")
          r.text_facts.emplace_back(k, v);
      r.facts = to_json(p)["facts"];
      auto out = std::make_unique<Checked>(std::move(r));
      out->baseline = findings_baseline;
      return out;
    });
  };
}

void setup_host_diff(CLI::App& sub, Runner& run) {
  auto files = std::make_shared<std::vector<std::string>>();
  auto format = std::make_shared<std::string>("text");
  sub.add_option("HOST.json", *files, "Two or more profiles")->required()->expected(2, -1);
  sub.add_option("--format", *format, "text or json")->check(CLI::IsMember({"text", "json"}));
  run = [files, format] {
    std::vector<std::pair<std::string, HostProfile>> profiles;
    for (const auto& f : *files) profiles.emplace_back(f, read_profile(f));
    FleetDiff d = diff_profiles(profiles);
    if (*format == "json") {
      nlohmann::ordered_json j;
      j["schema"] = "trainimg.host-diff/v1";
      j["inputs"] = *files;
      j["nodes"] = d.nodes;
      j["compared"] = d.compared;
      nlohmann::ordered_json rows = nlohmann::ordered_json::array();
      for (const auto& [k, v] : d.rows) rows.push_back({{"fact", k}, {"values", v}});
      j["differences"] = rows;
      std::cout << j.dump(2) << "\n";
    } else if (d.rows.empty()) {
      std::cout << "all " << d.nodes.size() << " nodes agree on " << d.compared << " facts\n";
    } else {
      std::cout << render_fleet_table(d) << "\n"
                << d.rows.size() << " of " << d.compared
                << " facts differ: every node must share one environment\n";
    }
    return d.rows.empty() ? int(kExitOk) : int(kExitFindings);
  };
}

const Command kHostCommands[] = {
    {"capture", "Run the host probes and write a trainimg.host/v1 profile", setup_host_capture},
    {"bundle", "Save every probe's raw output into a directory, one file each", setup_host_bundle},
    {"check", "Judge a profile (or this node) against the host rules", setup_host_check},
    {"diff", "Show the facts that differ between node profiles", setup_host_diff},
};

}  // namespace

void setup_host(CLI::App& sub, Runner& run) {
  run = add_commands(sub, kHostCommands);
}

}  // namespace trainimg::cmd
