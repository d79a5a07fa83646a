// SPDX-License-Identifier: GPL-3.0-or-later
// trainimg host capture|bundle|check|diff (issue 6, seed 000 host validation).
#include "inspect/host.h"

#include <sys/stat.h>
#include <unistd.h>

#include <iostream>
#include <map>
#include <memory>

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

HostProfile capture_profile(const std::string& from, double timeout_s) {
  if (!from.empty()) {
    struct stat st;
    if (::stat(from.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
      throw Error(from, "not a bundle directory", "write one with: trainimg host bundle DIR");
    ReplayRunner runner(from);
    HostProfile p = capture(runner, timeout_of(timeout_s), "bundle:" + from);
    return p;
  }
  ExecRunner runner;
  return capture(runner, timeout_of(timeout_s), "live");
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
  auto format = std::make_shared<std::string>("text");
  auto fail_on = std::make_shared<std::string>("error");
  auto timeout = std::make_shared<double>(10);
  auto strict = std::make_shared<bool>(false);
  sub.add_option("HOST.json", *file, "A profile written by `trainimg host capture`");
  sub.add_flag("--live", *live, "Capture this node now instead of reading a profile");
  sub.add_option(
      "--expect", *expect,
      "gpus=N,efas=N,gpu-model=NAME,efa-driver>=V,kernel=K,nvidia-fs>=V,lustre=yes,gds=yes,lnet-efas=N,"
      "fabric-manager=yes,gdrcopy=yes,nvme-mount=yes,memlock=yes");
  sub.add_option("--baseline", *baseline, "A reference node's profile: kernel changed, versions drifted");
  sub.add_flag("--strict", *strict,
               "An input that was not captured (probe absent) fails its check instead of a note");
  sub.add_option("--format", *format, "text, json, sarif or junit");
  sub.add_option("--fail-on", *fail_on, "error, warning or never (default error)");
  sub.add_option("--timeout", *timeout, "Per-probe timeout in seconds with --live (default 10)");
  run = [=] {
    Format fmt = parse_format(*format);
    FailOn fo = parse_fail_on(*fail_on);
    if (file->empty() == !*live)
      throw Error("host check", "give either a profile (HOST.json) or --live",
                  "trainimg host check HOST.json");
    Expectations e = parse_expectations(*expect);
    e.strict = *strict;
    HostProfile p = *live ? capture_profile("", *timeout) : read_profile(*file);
    std::string where = *live ? (p.hostname.empty() ? "live" : p.hostname) : *file;
    std::optional<HostProfile> base;
    if (!baseline->empty()) base = read_profile(*baseline);
    HostCheckResult res = check_host(p, e, base ? &*base : nullptr, where, *baseline);
    Report r;
    r.kind = "host";
    r.inputs = {where};
    if (base) r.inputs.push_back(*baseline);
    r.rules = profile_rules();
    r.findings = std::move(res.findings);
    r.notes = std::move(res.notes);
    r.text_facts.emplace_back("host", p.hostname.empty() ? "?" : p.hostname);
    for (auto& [k, v] : fact_rows(p))
      if (k != "held_packages" && k != "infiniband_devices" && k != "fi_info_domains")
        r.text_facts.emplace_back(k, v);
    r.facts = to_json(p)["facts"];
    std::cout << render(r, fmt, {want_color(STDOUT_FILENO) && fmt == Format::Text, nullptr});
    return exit_code(r, fo);
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

}  // namespace

void setup_host(CLI::App& sub, Runner& run) {
  sub.require_subcommand(1, 1);
  auto runners = std::make_shared<std::map<CLI::App*, Runner>>();
  struct Sub {
    const char* name;
    const char* summary;
    void (*setup)(CLI::App&, Runner&);
  };
  for (const Sub& s :
       {Sub{"capture", "Run the host probes and write a trainimg.host/v1 profile", setup_host_capture},
        Sub{"bundle", "Save every probe's raw output into a directory, one file each", setup_host_bundle},
        Sub{"check", "Judge a profile (or this node) against the host rules", setup_host_check},
        Sub{"diff", "Show the facts that differ between node profiles", setup_host_diff}}) {
    CLI::App* child = sub.add_subcommand(s.name, s.summary);
    s.setup(*child, (*runners)[child]);
  }
  run = [&sub, runners] {
    for (CLI::App* child : sub.get_subcommands()) return (*runners)[child]();
    return int(kExitUsage);
  };
}

}  // namespace trainimg::cmd
