// SPDX-License-Identifier: GPL-3.0-or-later
// trainimg cache ls [--format text|json] | prune [--max-size SIZE] [--older-than DURATION]
// | warm URI | verify: builder::run_cache_command (builder/pyxis/pyxis.h).
#include <iostream>

#include "builder/pyxis/pyxis.h"
#include "cmd/command.h"

namespace trainimg::cmd {

void setup_cache(CLI::App& sub, Runner& run) {
  auto dir = std::make_shared<std::string>();
  auto format = std::make_shared<std::string>("text");
  auto max_size = std::make_shared<std::string>();
  auto older = std::make_shared<std::string>();
  auto pyxis = std::make_shared<std::string>();
  sub.require_subcommand(1);
  sub.add_option("--cache", *dir,
                 "The cache directory (default: $TRAINIMG_CACHE, else $XDG_CACHE_HOME/trainimg)");
  CLI::App* ls = sub.add_subcommand("ls", "List cached blobs, least recently used first");
  ls->add_option("--format", *format, "text or json")->check(CLI::IsMember({"text", "json"}));
  CLI::App* prune =
      sub.add_subcommand("prune", "Remove least recently used blobs (never one another process holds)");
  prune->add_option("--max-size", *max_size, "Keep at most this much, e.g. 50G");
  prune->add_option("--older-than", *older, "Remove what was not used for this long, e.g. 7d or 12h");
  auto uri = std::make_shared<std::string>();
  CLI::App* warm = sub.add_subcommand(
      "warm",
      "Import URI into the shared Pyxis cache ahead of jobs (a trusted account: the CI that publishes)");
  warm->add_option("uri", *uri, "docker://REFERENCE or oci:DIR[:TAG]")->required();
  CLI::App* verify = sub.add_subcommand(
      "verify",
      "Re-check every Pyxis cache entry against the SHA-256 its sidecar recorded when it was written");
  verify->add_option("--format", *format, "text or json")->check(CLI::IsMember({"text", "json"}));
  for (CLI::App* c : {warm, verify})
    c->add_option("--pyxis-cache", *pyxis, "The shared .sqsh cache (default: $TRAINIMG_PYXIS_CACHE)");
  for (CLI::App* c : {ls, prune}) {
    c->add_option("--cache", *dir,
                  "The cache directory (default: $TRAINIMG_CACHE, else $XDG_CACHE_HOME/trainimg)");
    c->add_option("--pyxis-cache", *pyxis,
                  "The shared .sqsh cache of the Pyxis importer (TRAINIMG_PYXIS_CACHE) instead of the blob "
                  "cache; prune never removes an entry a job step holds a lease on");
  }
  run = [=] {
    builder::CacheCommand c{.op = prune->parsed()    ? builder::CacheCommand::Prune
                                  : warm->parsed()   ? builder::CacheCommand::Warm
                                  : verify->parsed() ? builder::CacheCommand::Verify
                                                     : builder::CacheCommand::Ls,
                            .dir = *dir,
                            .pyxis = *pyxis,
                            .uri = *uri,
                            .max_size = *max_size,
                            .older_than = *older,
                            .json = *format == "json"};
    return builder::run_cache_command(c, std::cout, std::cerr);
  };
}

}  // namespace trainimg::cmd
