// SPDX-License-Identifier: GPL-3.0-or-later
// trainimg pyxis-importer get URI | release: Pyxis's importer= protocol
// (builder/pyxis/pyxis.h). stdout carries only the path; everything else stderr.
#include <cstdlib>
#include <iostream>
#include <memory>

#include "builder/publish/publish.h"
#include "builder/pyxis/pyxis.h"
#include "cmd/command.h"
#include "common/report.h"

namespace trainimg::cmd {

void setup_pyxis_importer(CLI::App& sub, Runner& run) {
  auto uri = std::make_shared<std::string>();
  sub.require_subcommand(1);
  CLI::App* get = sub.add_subcommand("get", "Import URI for this job step; print the absolute .sqsh path");
  get->add_option("uri", *uri,
                  "docker://REFERENCE, dockerd://IMAGE, docker-archive:PATH, oci:DIR, dir:ROOTFS")
      ->required();
  CLI::App* release = sub.add_subcommand(
      "release", "Remove this job step's .sqsh, or drop its lease on the shared cache entry (idempotent)");
  run = [uri, get, release]() -> int {
    auto env = builder::pyxis_env([](const char* name) { return std::getenv(name); });
    if (get->parsed()) {
      try {
        auto pre = builder::preflight_options([](const char* name) { return std::getenv(name); }, env);
        std::string notes;
        std::string path = builder::pyxis_get(*uri, env, pre, notes, &std::cerr);
        std::cerr << notes;
        std::cout << path << std::endl;
      } catch (const builder::PreflightRefused& r) {
        std::cerr << r.report;
        return int(kExitFindings);
      }  // Interrupted: cmd::run_guarded says so and exits 128+N, as for every command.
      return int(kExitOk);
    }
    (void)release;
    builder::pyxis_release(env);
    return int(kExitOk);
  };
}

}  // namespace trainimg::cmd
