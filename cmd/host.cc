// SPDX-License-Identifier: GPL-3.0-or-later
// trainimg host capture|bundle|check|diff (issue 6, seed 000 host validation).
#include "inspect/host.h"

#include <iostream>

#include "builder/slurm/slurm.h"
#include "cmd/command.h"
#include "common/atomic_file.h"
#include "inspect/host/fleet.h"
#include "inspect/host/probes.h"

namespace trainimg::cmd {

namespace {

using namespace trainimg::host;

void setup_host_capture(CLI::App& sub, Runner& run) {
  auto out = std::make_shared<std::string>("-");
  auto from = std::make_shared<std::string>();
  auto timeout = std::make_shared<double>(10);
  sub.add_option("-o,--output", *out, "Write the trainimg.host/v1 profile here (default: standard output)");
  sub.add_option("--from", *from, "Build the profile from a bundle directory instead of running the probes");
  sub.add_option("--timeout", *timeout, "Per-probe timeout in seconds (default 10)");
  run = [out, from, timeout] {
    HostProfile p = builder::capture_node(*from, *timeout);
    write_file_atomic(*out, serialize(p));
    // Exit 0 once written: a probe that did not answer is a recorded fact.
    std::cerr << builder::capture_summary(p);
    return int(kExitOk);
  };
}

void setup_host_bundle(CLI::App& sub, Runner& run) {
  auto dir = std::make_shared<std::string>();
  auto timeout = std::make_shared<double>(10);
  sub.add_option("DIR", *dir, "Directory to write the raw probe outputs to (created if missing)")->required();
  sub.add_option("--timeout", *timeout, "Per-probe timeout in seconds (default 10)");
  run = [dir, timeout] {
    HostProfile p = builder::capture_live(*timeout);
    write_bundle(p, *dir);
    std::cerr << builder::capture_summary(p);
    return int(kExitOk);
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
    std::cout << render_host_diff(d, *files, *format == "json");
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
