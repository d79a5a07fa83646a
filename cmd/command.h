// SPDX-License-Identifier: GPL-3.0-or-later
// One file per subcommand: it declares its flags on the CLI11 subcommand it is
// given and sets `run` to the function that does the work and returns the
// exit code. main.cc lists them all in one table.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <memory>
#include <string>

#include "common/report.h"
#include "recipes/policy/policy.h"

namespace trainimg::cmd {

using Runner = std::function<int()>;
using Setup = void (*)(CLI::App& sub, Runner& run);

struct Command {
  const char* name;
  const char* summary;
  Setup setup;
};

// Defined in the subcommands' files.
void setup_rules(CLI::App& sub, Runner& run);
void setup_lint(CLI::App& sub, Runner& run);
void setup_inspect(CLI::App& sub, Runner& run);
void setup_render(CLI::App& sub, Runner& run);
void setup_build(CLI::App& sub, Runner& run);
void setup_host(CLI::App& sub, Runner& run);
void setup_check(CLI::App& sub, Runner& run);
void setup_gds(CLI::App& sub, Runner& run);
void setup_import(CLI::App& sub, Runner& run);
void setup_pyxis_importer(CLI::App& sub, Runner& run);
void setup_fleet(CLI::App& sub, Runner& run);
void setup_cache(CLI::App& sub, Runner& run);

/// --platform, --cache, --no-cache, --max-connections for commands that
/// read docker:// sources (cmd/cache.cc); apply_source_flags() hands them to
/// inspect::set_source_options() before the source is opened.
struct SourceFlags {
  std::string platform, cache;
  bool no_cache = false;
  unsigned max_connections = 0;
};
void add_source_flags(CLI::App& sub, const std::shared_ptr<SourceFlags>& f);
void apply_source_flags(const SourceFlags& f);

/// Policy (docs/policy.md) for every checking command (cmd/policy.cc):
/// --config FILE | --no-config (else the nearest .trainimg.yaml),
/// --baseline FILE, --write-baseline FILE, --show-suppressed.
struct PolicyFlags {
  std::string config, baseline, write_baseline;
  bool no_config = false;
  bool show_suppressed = false;
};
/// Adds the flags. `baseline_flag` false: the command declares --baseline
/// itself (host check, where it may also name a reference node's profile).
void add_policy_flags(CLI::App& sub, const std::shared_ptr<PolicyFlags>& f, bool baseline_flag = true);
/// The config the flags select, validated against the rule catalogue;
/// an empty Policy with --no-config or when none is found. Throws Error.
policy::Policy load_policy(const PolicyFlags& f);
/// --fail-on when given (non-empty), else the config's fail-on, else error.
FailOn resolve_fail_on(const std::string& flag, const policy::Policy& p);
/// Applies the config to `r`, then --write-baseline (writes FILE, returns
/// true: the command exits 0) or --baseline (findings become the new ones).
/// Throws Error for an unreadable baseline or both flags at once.
bool apply_policy_flags(Report& r, const PolicyFlags& f, const policy::Policy& p,
                        const policy::Sources* sources = nullptr);

}  // namespace trainimg::cmd
