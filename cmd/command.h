// SPDX-License-Identifier: GPL-3.0-or-later
// One file per subcommand: it declares its flags on the CLI11 subcommand it is
// given and sets `run` to the function that does the work and returns the
// exit code. main.cc lists them all in one table.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <memory>

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

}  // namespace trainimg::cmd
