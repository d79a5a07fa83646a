// SPDX-License-Identifier: GPL-3.0-or-later
// The one nested-subcommand dispatcher, and the one place where a stopping
// failure becomes its message and exit code.
#include <unistd.h>

#include <iostream>
#include <map>

#include "builder/publish/publish.h"
#include "cmd/cli/cli.h"
#include "common/error.h"

namespace trainimg::cmd {

Runner add_commands(CLI::App& parent, std::span<const Command> table, bool require_one) {
  if (require_one) parent.require_subcommand(1, 1);
  auto runners = std::make_shared<std::map<CLI::App*, Runner>>();
  for (const Command& c : table) {
    CLI::App* child = parent.add_subcommand(c.name, c.summary);
    c.setup(*child, (*runners)[child]);
  }
  return [&parent, runners]() -> int {
    for (CLI::App* child : parent.get_subcommands()) {
      const Runner& run = (*runners)[child];
      if (run) return run();
      std::cerr << child->help();
      return kExitUsage;
    }
    std::cerr << parent.help();
    return kExitUsage;
  };
}

int run_guarded(const Runner& run) {
  try {
    return run();
  } catch (const builder::Interrupted& e) {
    // After a progress line: the message starts on its own line.
    std::cerr << "\n" << render_diagnostic(e.diagnostic(), want_color(STDERR_FILENO));
    return 128 + e.signal_number();
  } catch (const Error& e) {
    std::cerr << render_diagnostic(e.diagnostic(), want_color(STDERR_FILENO));
    return kExitUsage;
  } catch (const std::exception& e) {
    std::cerr << "trainimg: error: " << e.what() << "\n";
    return kExitUsage;
  }
}

}  // namespace trainimg::cmd
