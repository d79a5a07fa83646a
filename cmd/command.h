// SPDX-License-Identifier: GPL-3.0-or-later
// One file per subcommand: it declares its flags on the CLI11 subcommand it is
// given and sets `run` to the function that does the work and returns the
// exit code. main.cc lists them all in one table.
#pragma once

#include "cmd/cli/cli.h"

namespace trainimg::cmd {

// Defined in the subcommands' files.
void setup_rules(CLI::App& sub, Runner& run);
void setup_lint(CLI::App& sub, Runner& run);
void setup_inspect(CLI::App& sub, Runner& run);
void setup_render(CLI::App& sub, Runner& run);
void setup_build(CLI::App& sub, Runner& run);
void setup_host(CLI::App& sub, Runner& run);
void setup_host_check(CLI::App& sub, Runner& run);  // host check (cmd/host_check.cc)
void setup_check(CLI::App& sub, Runner& run);
void setup_gds(CLI::App& sub, Runner& run);
void setup_import(CLI::App& sub, Runner& run);
void setup_pyxis_importer(CLI::App& sub, Runner& run);
void setup_fleet(CLI::App& sub, Runner& run);
void setup_cache(CLI::App& sub, Runner& run);

}  // namespace trainimg::cmd
