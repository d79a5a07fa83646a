// SPDX-License-Identifier: GPL-3.0-or-later
// trainimg: the command table, flag parsing and help; cmd::run_guarded
// (cmd/cli) turns a stopping Error into a rendered message and exit code 2.
#include <CLI/CLI.hpp>
#include <iostream>
#include <string>

#include "cmd/command.h"
#include "common/version_info.h"

namespace trainimg::cmd {
namespace {

// Every subcommand, in the order `trainimg help` lists them.
const Command kCommands[] = {
    {"rules", "List every rule with id, severity, seed source and fix", setup_rules},
    {"lint", "Lint Dockerfiles (or recipes) for the seed's EFA/NCCL/MPI pitfalls", setup_lint},
    {"inspect",
     "Inspect an image (.sqsh, docker archive, OCI, dockerd, rootfs): EFA stack, NCCL plugin, Open MPI",
     setup_inspect},
    {"render", "Render a recipe YAML to the Dockerfile seed 002 prescribes", setup_render},
    {"build", "Build a recipe or Dockerfile through the Docker Engine API (lint first, host network)",
     setup_build},
    {"host", "Capture and check a node: host capture|bundle|check|diff (seed 000)", setup_host},
    {"check", "Check NCCL output: check nccl-log|nccl-tests FILE", setup_check},
    {"gds", "Check GPUDirect Storage over EFA: gds check (seed 004)", setup_gds},
    {"import", "Import an image into an enroot-compatible .sqsh, streamed and published atomically",
     setup_import},
    {"pyxis-importer", "Pyxis importer= plug-in: pyxis-importer get URI | release", setup_pyxis_importer},
    {"fleet", "Check every Slurm node through srun (or a directory of profiles): fleet check", setup_fleet},
    {"cache", "The registry blob cache: cache ls | prune [--max-size SIZE] [--older-than DURATION]",
     setup_cache},
};

}  // namespace
}  // namespace trainimg::cmd

int main(int argc, char** argv) {
  using namespace trainimg;
  CLI::App app{
      "trainimg: build and validate container images for GPU training clusters "
      "(NGC PyTorch + AWS EFA, Slurm + Pyxis/Enroot)",
      "trainimg"};
  app.set_version_flag("--version", std::string("trainimg ") + TRAINIMG_VERSION);
  app.require_subcommand(0, 1);
  app.fallthrough(false);
  cmd::Runner chosen = cmd::add_commands(app, cmd::kCommands, false);
  CLI::App* help = app.add_subcommand("help", "Show this help, or a subcommand's: trainimg help SUBCOMMAND");
  std::string help_topic;
  help->add_option("subcommand", help_topic, "Subcommand to describe");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int rc = app.exit(e);
    return rc == 0 ? kExitOk : kExitUsage;
  }
  if (app.get_subcommands().empty() || help->parsed()) {
    if (!help_topic.empty()) {
      try {
        CLI::App* topic = app.get_subcommand(help_topic);
        std::cout << topic->get_formatter()->make_help(topic, "trainimg " + help_topic,
                                                       CLI::AppFormatMode::Normal);
        return kExitOk;
      } catch (const CLI::OptionNotFound&) {
        std::cerr << "trainimg: error: no subcommand '" << help_topic << "'\n";
        return kExitUsage;
      }
    }
    // app.help() would describe the parsed `help` subcommand itself.
    std::cout << app.get_formatter()->make_help(&app, "trainimg", CLI::AppFormatMode::Normal);
    return help->parsed() ? kExitOk : kExitUsage;
  }
  return cmd::run_guarded(chosen);
}
