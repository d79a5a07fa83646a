// SPDX-License-Identifier: GPL-3.0-or-later
// trainimg cache ls [--format text|json] | prune [--max-size SIZE]
// [--older-than DURATION]: the registry blob cache (inspect/inspect.h, registry::BlobCache),
// or with --pyxis-cache DIR the shared .sqsh cache of the Pyxis importer
// (builder/pyxis_cache.h).
// `cache warm URI` fills the Pyxis cache ahead of jobs; `cache verify` re-checks its
// entries against the content digests their sidecars recorded.
#include <cstdlib>
#include <ctime>
#include <iostream>
#include <nlohmann/json.hpp>

#include "builder/pyxis.h"
#include "builder/pyxis_cache.h"
#include "cmd/command.h"
#include "common/error.h"
#include "common/report.h"
#include "inspect/inspect.h"

namespace trainimg::cmd {

namespace {

std::string human(uint64_t b) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = double(b);
  int u = 0;
  while (v >= 1024 && u < 4) {
    v /= 1024;
    ++u;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, u == 0 ? "%.0f %s" : "%.1f %s", v, units[u]);
  return buf;
}

std::string iso_time(int64_t t) {
  std::time_t tt = static_cast<std::time_t>(t);
  std::tm tm{};
  gmtime_r(&tt, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::string pyxis_trust() {
  const char* t = std::getenv("TRAINIMG_PYXIS_CACHE_TRUST");
  return t ? t : "";
}

int run_pyxis_verify(const std::string& dir, const std::string& format) {
  builder::PyxisCache cache(dir, pyxis_trust());
  auto items = cache.verify();
  unsigned bad = 0;
  nlohmann::ordered_json j;
  j["schema"] = "trainimg.pyxis-cache-verify/v1";
  j["dir"] = cache.dir();
  j["entries"] = nlohmann::ordered_json::array();
  for (const auto& v : items) {
    bad += !v.problem.empty();
    const std::string path = v.item.area + "/" + v.item.name + ".sqsh";
    if (format == "json")
      j["entries"].push_back({{"path", path},
                              {"owner", v.item.owner},
                              {"recorded", v.recorded},
                              {"actual", v.actual},
                              {"ok", v.problem.empty()},
                              {"problem", v.problem}});
    else
      std::cout << (v.problem.empty() ? "ok   " : "BAD  ") << path
                << (v.problem.empty() ? "" : ": " + v.problem) << "\n";
  }
  if (format == "json") {
    j["bad"] = bad;
    std::cout << j.dump(2) << "\n";
  } else {
    std::cout << items.size() << " entries, " << bad << " bad, in " << cache.dir() << "\n";
  }
  return bad ? int(kExitFindings) : int(kExitOk);
}

int run_pyxis_cache(const std::string& dir, bool ls, const std::string& format, std::optional<uint64_t> size,
                    std::optional<int64_t> age) {
  builder::PyxisCache cache(dir, pyxis_trust());
  if (ls) {
    auto items = cache.list();
    uint64_t total = 0;
    for (const auto& e : items) total += e.bytes;
    if (format == "json") {
      nlohmann::ordered_json j;
      j["schema"] = "trainimg.pyxis-cache/v1";
      j["dir"] = cache.dir();
      j["total_bytes"] = total;
      j["entries"] = nlohmann::ordered_json::array();
      for (const auto& e : items)
        j["entries"].push_back({{"area", e.area},
                                {"owner", e.owner},
                                {"name", e.name},
                                {"digest", e.digest},
                                {"size", e.bytes},
                                {"last_used", iso_time(e.last_used)},
                                {"leases", e.leases},
                                {"trusted", e.trusted}});
      std::cout << j.dump(2) << "\n";
    } else {
      for (const auto& e : items)
        std::cout << (e.area == cache.dir() ? "" : e.area.substr(cache.dir().size() + 1) + "/") << e.name
                  << "  " << human(e.bytes) << "  " << iso_time(e.last_used) << "  " << e.leases
                  << (e.leases == 1 ? " lease" : " leases") << (e.trusted ? "" : "  UNTRUSTED") << "\n";
      std::cout << items.size() << " entries, " << human(total) << " in " << cache.dir() << "\n";
    }
    return int(kExitOk);
  }
  auto r = cache.prune(size, age);
  std::cout << "removed " << r.removed << " entries (" << human(r.removed_bytes) << "), kept " << r.kept
            << " (" << human(r.kept_bytes) << ")"
            << (r.leased ? ", " + std::to_string(r.leased) + " leased" : "")
            << (r.busy ? ", " + std::to_string(r.busy) + " being imported" : "")
            << (r.stale_leases ? ", " + std::to_string(r.stale_leases) + " stale leases removed" : "")
            << "\n";
  return int(kExitOk);
}

}  // namespace

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
  run = [=]() -> int {
    std::optional<uint64_t> size;
    std::optional<int64_t> age;
    if (prune->parsed()) {
      if (!max_size->empty() && !(size = inspect::registry::parse_byte_size(*max_size)))
        throw Error("--max-size", "'" + *max_size + "' is not a size (e.g. 50G, 512M, 1024)");
      if (!older->empty() && !(age = inspect::registry::parse_duration(*older)))
        throw Error("--older-than", "'" + *older + "' is not a duration (e.g. 7d, 12h, 30m)");
      if (!size && !age)
        throw Error("cache prune", "say what to remove: --max-size SIZE and/or --older-than DURATION");
    }
    if ((warm->parsed() || verify->parsed()) && pyxis->empty()) {
      const char* env = std::getenv("TRAINIMG_PYXIS_CACHE");
      if (!env || !*env)
        throw Error("--pyxis-cache", "say which cache: --pyxis-cache DIR or TRAINIMG_PYXIS_CACHE");
      *pyxis = env;
    }
    if (warm->parsed()) {
      bool built = false;
      std::string path = builder::pyxis_cache_warm(*uri, *pyxis, pyxis_trust(), std::cerr, built);
      std::cerr << "trainimg: cache warm: " << (built ? "imported " : "already cached: ") << *uri << "\n";
      std::cout << path << "\n";
      return int(kExitOk);
    }
    if (verify->parsed()) return run_pyxis_verify(*pyxis, *format);
    if (!pyxis->empty()) return run_pyxis_cache(*pyxis, ls->parsed(), *format, size, age);
    inspect::registry::BlobCache cache(dir->empty() ? inspect::registry::default_cache_dir() : *dir);
    if (ls->parsed()) {
      auto entries = cache.list();
      uint64_t total = 0;
      for (const auto& e : entries) total += e.size;
      if (*format == "json") {
        nlohmann::ordered_json j;
        j["schema"] = "trainimg.cache/v1";
        j["dir"] = cache.dir();
        j["total_bytes"] = total;
        j["blobs"] = nlohmann::ordered_json::array();
        for (const auto& e : entries)
          j["blobs"].push_back(
              {{"digest", e.digest}, {"size", e.size}, {"last_used", iso_time(e.last_used)}});
        std::cout << j.dump(2) << "\n";
      } else {
        for (const auto& e : entries)
          std::cout << e.digest << "  " << human(e.size) << "  " << iso_time(e.last_used) << "\n";
        std::cout << entries.size() << " blobs, " << human(total) << " in " << cache.dir() << "\n";
      }
      return int(kExitOk);
    }
    auto r = cache.prune(size, age);
    std::cout << "removed " << r.removed << " blobs (" << human(r.removed_bytes) << "), kept " << r.kept
              << " (" << human(r.kept_bytes) << ")"
              << (r.busy ? ", " + std::to_string(r.busy) + " in use" : "") << "\n";
    return int(kExitOk);
  };
}

}  // namespace trainimg::cmd
