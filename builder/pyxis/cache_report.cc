// SPDX-License-Identifier: GPL-3.0-or-later
// `trainimg cache ls|prune|verify`: the registry blob cache
// (inspect::registry::BlobCache) and the Pyxis importer's shared .sqsh cache
// (PyxisCache), as text or JSON (trainimg.cache/v1, trainimg.pyxis-cache/v1,
// trainimg.pyxis-cache-verify/v1).
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <nlohmann/json.hpp>
#include <ostream>

#include "builder/pyxis/cache.h"
#include "builder/pyxis/pyxis.h"
#include "common/error.h"
#include "common/units.h"
#include "inspect/registry/registry.h"

namespace trainimg::builder {

namespace {

std::string iso_time(int64_t t) {
  std::time_t tt = static_cast<std::time_t>(t);
  std::tm tm{};
  gmtime_r(&tt, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

}  // namespace

void blob_cache_ls(const std::string& dir, bool json, std::ostream& out) {
  inspect::registry::BlobCache cache(dir.empty() ? inspect::registry::default_cache_dir() : dir);
  auto entries = cache.list();
  uint64_t total = 0;
  for (const auto& e : entries) total += e.size;
  if (json) {
    nlohmann::ordered_json j;
    j["schema"] = "trainimg.cache/v1";
    j["dir"] = cache.dir();
    j["total_bytes"] = total;
    j["blobs"] = nlohmann::ordered_json::array();
    for (const auto& e : entries)
      j["blobs"].push_back({{"digest", e.digest}, {"size", e.size}, {"last_used", iso_time(e.last_used)}});
    out << j.dump(2) << "\n";
    return;
  }
  for (const auto& e : entries)
    out << e.digest << "  " << format_byte_size(e.size) << "  " << iso_time(e.last_used) << "\n";
  out << entries.size() << " blobs, " << format_byte_size(total) << " in " << cache.dir() << "\n";
}

void blob_cache_prune(const std::string& dir, std::optional<uint64_t> max_size,
                      std::optional<int64_t> older_than_s, std::ostream& out) {
  inspect::registry::BlobCache cache(dir.empty() ? inspect::registry::default_cache_dir() : dir);
  auto r = cache.prune(max_size, older_than_s);
  out << "removed " << r.removed << " blobs (" << format_byte_size(r.removed_bytes) << "), kept " << r.kept
      << " (" << format_byte_size(r.kept_bytes) << ")"
      << (r.busy ? ", " + std::to_string(r.busy) + " in use" : "") << "\n";
}

void pyxis_cache_ls(const PyxisCache& cache, bool json, std::ostream& out) {
  auto items = cache.list();
  uint64_t total = 0;
  for (const auto& e : items) total += e.bytes;
  if (json) {
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
    out << j.dump(2) << "\n";
    return;
  }
  for (const auto& e : items)
    out << (e.area == cache.dir() ? "" : e.area.substr(cache.dir().size() + 1) + "/") << e.name << "  "
        << format_byte_size(e.bytes) << "  " << iso_time(e.last_used) << "  " << e.leases
        << (e.leases == 1 ? " lease" : " leases") << (e.trusted ? "" : "  UNTRUSTED") << "\n";
  out << items.size() << " entries, " << format_byte_size(total) << " in " << cache.dir() << "\n";
}

void pyxis_cache_prune(const PyxisCache& cache, std::optional<uint64_t> max_size,
                       std::optional<int64_t> older_than_s, std::ostream& out) {
  auto r = cache.prune(max_size, older_than_s);
  out << "removed " << r.removed << " entries (" << format_byte_size(r.removed_bytes) << "), kept " << r.kept
      << " (" << format_byte_size(r.kept_bytes) << ")"
      << (r.leased ? ", " + std::to_string(r.leased) + " leased" : "")
      << (r.busy ? ", " + std::to_string(r.busy) + " being imported" : "")
      << (r.stale_leases ? ", " + std::to_string(r.stale_leases) + " stale leases removed" : "") << "\n";
}

bool pyxis_cache_verify(const PyxisCache& cache, bool json, std::ostream& out) {
  auto items = cache.verify();
  unsigned bad = 0;
  nlohmann::ordered_json j;
  j["schema"] = "trainimg.pyxis-cache-verify/v1";
  j["dir"] = cache.dir();
  j["entries"] = nlohmann::ordered_json::array();
  for (const auto& v : items) {
    bad += !v.problem.empty();
    const std::string path = v.item.area + "/" + v.item.name + ".sqsh";
    if (json)
      j["entries"].push_back({{"path", path},
                              {"owner", v.item.owner},
                              {"recorded", v.recorded},
                              {"actual", v.actual},
                              {"ok", v.problem.empty()},
                              {"problem", v.problem}});
    else
      out << (v.problem.empty() ? "ok   " : "BAD  ") << path << (v.problem.empty() ? "" : ": " + v.problem)
          << "\n";
  }
  if (json) {
    j["bad"] = bad;
    out << j.dump(2) << "\n";
  } else {
    out << items.size() << " entries, " << bad << " bad, in " << cache.dir() << "\n";
  }
  return bad == 0;
}

int run_cache_command(const CacheCommand& c, std::ostream& out, std::ostream& err) {
  std::optional<uint64_t> size;
  std::optional<int64_t> age;
  if (c.op == CacheCommand::Prune) {
    if (!c.max_size.empty() && !(size = parse_byte_size(c.max_size)))
      throw Error("--max-size", "'" + c.max_size + "' is not a size (e.g. 50G, 512M, 1024)");
    if (!c.older_than.empty() && !(age = inspect::registry::parse_duration(c.older_than)))
      throw Error("--older-than", "'" + c.older_than + "' is not a duration (e.g. 7d, 12h, 30m)");
    if (!size && !age)
      throw Error("cache prune", "say what to remove: --max-size SIZE and/or --older-than DURATION");
  }
  std::string pyxis = c.pyxis;
  if ((c.op == CacheCommand::Warm || c.op == CacheCommand::Verify) && pyxis.empty()) {
    const char* env = std::getenv("TRAINIMG_PYXIS_CACHE");
    if (!env || !*env)
      throw Error("--pyxis-cache", "say which cache: --pyxis-cache DIR or TRAINIMG_PYXIS_CACHE");
    pyxis = env;
  }
  const char* t = std::getenv("TRAINIMG_PYXIS_CACHE_TRUST");
  std::string trust = t ? t : "";
  if (c.op == CacheCommand::Warm) {
    bool built = false;
    std::string path = pyxis_cache_warm(c.uri, pyxis, trust, err, built);
    err << "trainimg: cache warm: " << (built ? "imported " : "already cached: ") << c.uri << "\n";
    out << path << "\n";
    return 0;
  }
  if (c.op == CacheCommand::Verify) return pyxis_cache_verify(PyxisCache(pyxis, trust), c.json, out) ? 0 : 1;
  if (!pyxis.empty() && c.op == CacheCommand::Ls)
    pyxis_cache_ls(PyxisCache(pyxis, trust), c.json, out);
  else if (!pyxis.empty())
    pyxis_cache_prune(PyxisCache(pyxis, trust), size, age, out);
  else if (c.op == CacheCommand::Ls)
    blob_cache_ls(c.dir, c.json, out);
  else
    blob_cache_prune(c.dir, size, age, out);
  return 0;
}

}  // namespace trainimg::builder
