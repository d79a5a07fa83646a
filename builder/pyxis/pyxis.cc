// SPDX-License-Identifier: GPL-3.0-or-later
#include "builder/pyxis/pyxis.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <stdexcept>

#include "builder/import/import.h"
#include "builder/pyxis/cache.h"
#include "common/atomic_file.h"
#include "common/error.h"
#include "common/sha256.h"
#include "inspect/host.h"
#include "inspect/inspect.h"
#include "inspect/registry/registry.h"
#include "inspect/sources/source.h"

namespace trainimg::builder {

namespace {

// A value that becomes one path component must stay one.
std::string component(const std::function<const char*(const char*)>& getenv, const char* name,
                      const std::string& fallback) {
  const char* v = getenv(name);
  std::string s = v && *v ? v : fallback;
  if (s.empty()) throw Error(name, "not set", "pyxis sets it for every job step; run this from pyxis");
  if (s == "." || s == ".." || s.find('/') != std::string::npos)
    throw Error(name, "'" + s + "' cannot name a file", "expected a job number, not a path");
  return s;
}

void remove_if_present(const std::string& path) {
  if (::unlink(path.c_str()) != 0 && errno != ENOENT) throw_errno(path, "cannot remove");
}

}  // namespace

std::string slurm_step_from_process(pid_t pid, const std::string& job_id) {
  for (int depth = 0; depth < 8 && pid > 1; ++depth) {
    std::ifstream cmd("/proc/" + std::to_string(pid) + "/cmdline");
    std::string title;
    std::getline(cmd, title, '\0');
    const std::string head = "slurmstepd: [";
    if (title.starts_with(head)) {
      auto close = title.find(']', head.size());
      auto dot = title.find('.', head.size());
      if (close != std::string::npos && dot != std::string::npos && dot < close &&
          title.substr(head.size(), dot - head.size()) == job_id)
        return title.substr(dot + 1, close - dot - 1);
    }
    std::ifstream st("/proc/" + std::to_string(pid) + "/stat");
    std::string text((std::istreambuf_iterator<char>(st)), {});
    auto paren = text.rfind(')');
    if (paren == std::string::npos || paren + 4 > text.size()) break;
    pid = static_cast<pid_t>(std::atol(text.c_str() + paren + 4));
  }
  return {};
}

PyxisEnv pyxis_env(const std::function<const char*(const char*)>& getenv,
                   const std::function<std::string(const std::string&)>& step_of_job) {
  PyxisEnv e;
  const char* rt = getenv("PYXIS_RUNTIME_PATH");
  e.runtime_path = rt && *rt ? rt : "/run/pyxis";
  e.job_uid = component(getenv, "SLURM_JOB_UID", std::to_string(::getuid()));
  e.job_id = component(getenv, "SLURM_JOB_ID", "");
  const char* step = getenv("SLURM_STEP_ID");
  if (!step || !*step) {
    std::string named = step_of_job ? step_of_job(e.job_id) : slurm_step_from_process(::getppid(), e.job_id);
    if (named.empty())
      throw Error("SLURM_STEP_ID",
                  "not set, and no slurmstepd of job " + e.job_id + " among the importer's parents",
                  "pyxis runs the importer from slurmstepd, which names the step (batch, extern, "
                  "interactive or a number); set SLURM_STEP_ID when running it by hand");
    e.step_id = component([&](const char*) { return named.c_str(); }, "SLURM_STEP_ID", "");
  } else {
    e.step_id = component(getenv, "SLURM_STEP_ID", "");
  }
  char host[256] = {};
  if (gethostname(host, sizeof host - 1) != 0 || !*host) std::snprintf(host, sizeof host, "localhost");
  const char* node = getenv("SLURMD_NODENAME");
  e.node = node && *node ? node : host;
  std::replace(e.node.begin(), e.node.end(), '/', '_');
  const char* shared = getenv("TRAINIMG_PYXIS_CACHE");
  e.shared_cache = shared && *shared ? shared : "";
  const char* trust = getenv("TRAINIMG_PYXIS_CACHE_TRUST");
  e.cache_trust = trust ? trust : "";
  return e;
}

std::string pyxis_lease_id(const PyxisEnv& env) {
  return env.node + "." + env.job_uid + "." + env.job_id + "." + env.step_id;
}

std::string pyxis_sqsh_path(const PyxisEnv& env) {
  return (std::filesystem::path(env.runtime_path) / env.job_uid / (env.job_id + "." + env.step_id + ".sqsh"))
      .lexically_normal()
      .string();
}

namespace {

ImportOptions pyxis_import_options(const std::string& uri) {
  ImportOptions o;
  o.source = uri;
  o.compressor = sqsh::Compressor::Zstd;
  o.level = 3;
  o.block_size = 1u << 20;
  o.force = true;     // a retried step replaces its own file, atomically
  o.inspect = false;  // the job is waiting; `trainimg inspect` is for the image's author
  return o;
}

// The manifest digest that keys the shared cache: docker:// resolves it
// (manifests only), oci: reads its index; other kinds have none.
std::string shared_digest(const std::string& uri) {
  if (uri.starts_with("docker://")) return inspect::resolve_registry_digest(uri.substr(9));
  if (uri.starts_with("oci:")) {
    auto d = inspect::open_source(uri)->describe();
    if (d.kind == "oci" && is_sha256_digest(d.digest)) return d.digest;
  }
  return {};
}

std::string import_private(const std::string& uri, const PyxisEnv& env, nlohmann::ordered_json* sidecar);

ImportOptions shared_import_options(const std::string& uri) {
  ImportOptions o = pyxis_import_options(uri);
  o.inspect = true;               // once per entry: the sidecar keeps the verdict and the facts
  o.provenance_by_digest = true;  // the entry is the image's, whatever reference built it
  return o;
}

std::string import_step(const std::string& uri, const PyxisEnv& env, nlohmann::ordered_json* sidecar,
                        std::ostream* log) {
  if (uri.starts_with("podman://"))
    throw Error(uri, "podman:// is not supported by trainimg import",
                "use docker://REGISTRY#IMAGE (straight from the registry) or dockerd://IMAGE");
  if (env.shared_cache.empty()) return import_private(uri, env, sidecar);
  std::ostream& out = log ? *log : std::cerr;
  PyxisCache cache(env.shared_cache, env.cache_trust);
  std::string digest = shared_digest(uri);
  if (digest.empty()) {
    out << "trainimg: pyxis cache: " << uri << " has no manifest digest; importing a private copy\n";
    return import_private(uri, env, sidecar);
  }
  SharedEntry e = cache.get(digest, shared_import_options(uri), pyxis_lease_id(env), out);
  if (e.path.empty()) return import_private(uri, env, sidecar);
  if (sidecar) *sidecar = e.sidecar;
  return e.path;
}

std::string import_private(const std::string& uri, const PyxisEnv& env, nlohmann::ordered_json* sidecar) {
  std::string path = std::filesystem::absolute(pyxis_sqsh_path(env)).string();
  std::string dir = std::filesystem::path(path).parent_path().string();
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw Error(dir, "cannot create directory: " + ec.message());
  ::chmod(dir.c_str(), 0700);
  ImportOptions o = pyxis_import_options(uri);
  o.output = path;
  ImportResult r = import_image(o);
  if (sidecar) *sidecar = r.sidecar;
  return path;
}

using Json = nlohmann::ordered_json;

// The report on the facts the import recorded in the sidecar (the image is
// not read): nullopt when there are none (a private import is not
// inspected) or when they cannot be used, `why` then saying why for facts
// that are there but another version, not this image's (their digest is not
// the sidecar's) or damaged: the sidecar of a shared 1777 directory may hold
// anything, so its facts are read strictly (inspect::facts_from_json).
std::optional<Report> report_from_sidecar(const Json& sidecar, const inspect::ImageExpectations& e,
                                          const std::string& sqsh, std::string& why) {
  if (!sidecar.is_object() || !sidecar.contains("inspect") || !sidecar["inspect"].is_object() ||
      !sidecar["inspect"].contains("facts"))
    return std::nullopt;
  try {
    Report rep = inspect::report_from_facts_json(sidecar["inspect"]["facts"], e, sqsh + ".json");
    const Json& d = rep.facts["image"]["digest"];
    const Json* want = sidecar.contains("image_digest") ? &sidecar["image_digest"] : nullptr;
    if (!d.is_string() || !want || *want != d) {
      why = "the facts in " + sqsh + ".json do not name the image's digest";
      return std::nullopt;
    }
    return rep;
  } catch (const Error& err) {
    why = err.what();
    return std::nullopt;
  }
}

// Findings as image_findings caches them: objects whose rule, severity and
// message are strings.
bool well_formed(const Json& findings) {
  if (!findings.is_array()) return false;
  for (const auto& f : findings)
    if (!f.is_object() || !f.contains("rule") || !f["rule"].is_string() || !f.contains("severity") ||
        !f["severity"].is_string() || !f.contains("message") || !f["message"].is_string())
      return false;
  return true;
}

// The image's findings against `e`: from the cache when this image (by
// digest) was judged for this host stack before, else from the facts its
// sidecar records, else one inspection of the published .sqsh; then cached.
// Sources without a digest (dir:) are read each time.
Json image_findings(const std::string& sqsh, const Json& sidecar, const inspect::ImageExpectations& e,
                    const std::string& cache_dir, std::string& notes) {
  std::string digest;
  for (const char* k : {"image_digest", "config_digest"})
    if (sidecar.contains(k) && sidecar[k].is_string()) {
      digest = sidecar[k].get<std::string>();
      break;
    }
  std::string key;
  if (!digest.empty())
    key = sha256_digest(digest + "|" + e.efa_installer.value_or("") + "|" + e.libfabric.value_or("") + "|" +
                        e.aws_ofi_nccl.value_or("") + "|" + e.cuda_driver.value_or(""))
              .substr(7);
  std::string cached = cache_dir + "/" + key + ".json";
  // Only a verdict this user wrote is trusted (the directory may be shared).
  struct stat vst {};
  if (!key.empty() && ::stat(cached.c_str(), &vst) == 0 && S_ISREG(vst.st_mode) &&
      vst.st_uid == ::geteuid()) {
    std::ifstream in(cached);
    if (in) {
      try {
        // As written below: 3 levels; deeper is damaged (a copy would recurse as deep).
        Json j = Json::parse(in, [](int depth, Json::parse_event_t, Json&) {
          if (depth > 8) throw std::runtime_error("nested too deep");
          return true;
        });
        if (j.value("image_digest", "") == digest && j.contains("findings") && well_formed(j["findings"]))
          return j["findings"];
      } catch (const std::exception&) {  // a damaged cache entry is re-made
      }
    }
  }
  std::string why;
  std::optional<Report> rep = report_from_sidecar(sidecar, e, sqsh, why);
  if (!rep) {
    if (!why.empty())
      notes += "trainimg: preflight: the sidecar's facts are not used (" + why + "); reading the image\n";
    rep = inspect::inspect_image("sqsh:" + sqsh, e);
  }
  Json findings = Json::array();
  for (const auto& d : rep->findings)
    findings.push_back(
        {{"rule", d.rule_id}, {"severity", std::string(to_string(d.severity))}, {"message", d.message}});
  if (!key.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(cache_dir, ec);
    try {
      write_file_atomic(cached, Json{{"image_digest", digest}, {"findings", findings}}.dump(2) + "\n");
    } catch (const Error&) {  // no cache is slower, not wrong
    }
  }
  return findings;
}

}  // namespace

std::string pyxis_get(const std::string& uri, const PyxisEnv& env, std::ostream* log) {
  return import_step(uri, env, nullptr, log);
}

PreflightOptions preflight_options(const std::function<const char*(const char*)>& getenv,
                                   const PyxisEnv& env) {
  PreflightOptions o;
  const char* p = getenv("TRAINIMG_PREFLIGHT");
  if (p && *p) o.policy = p;
  if (o.policy != "error" && o.policy != "warn" && o.policy != "off")
    throw Error("TRAINIMG_PREFLIGHT", "'" + o.policy + "' is not error, warn or off",
                "set it in the importer wrapper that plugstack.conf names");
  const char* h = getenv("TRAINIMG_HOST_PROFILE");
  o.host_profile = h && *h ? h : "/run/trainimg/host.json";
  const char* c = getenv("TRAINIMG_PREFLIGHT_CACHE");
  // Per job user: a verdict is only ever trusted from the user's own directory
  // (a directory every job user can write would let one plant "clean"
  // verdicts for the others' jobs).
  o.cache_dir = c && *c ? c : env.runtime_path + "/" + env.job_uid + "/trainimg-preflight";
  return o;
}

std::string pyxis_get(const std::string& uri, const PyxisEnv& env, const PreflightOptions& o,
                      std::string& notes, std::ostream* log) {
  Json sidecar;
  std::string path = import_step(uri, env, &sidecar, log);
  if (o.policy == "off") return path;
  struct stat st;
  if (::stat(o.host_profile.c_str(), &st) != 0) {
    notes += "trainimg: preflight: cannot tell: no host profile at " + o.host_profile +
             " (write it at boot: trainimg host capture -o " + o.host_profile + "); the job runs\n";
    return path;
  }
  host::HostProfile hp = host::read_profile(o.host_profile);
  inspect::ImageExpectations e = inspect::expectations_from_host(hp, o.host_profile);
  Json findings = image_findings(path, sidecar, e, o.cache_dir, notes);
  std::string errors;
  for (const auto& f : findings) {
    std::string line = "trainimg: " + f.value("rule", "") + ": " + f.value("message", "") + "\n";
    std::string sev = f.value("severity", "");
    if (sev == "error")
      errors += line;
    else if (sev == "warning")
      notes += line;
  }
  if (errors.empty()) return path;
  std::string head = "trainimg: preflight: image " + uri + " does not match node " +
                     (hp.hostname.empty() ? o.host_profile : hp.hostname) + " (" + o.host_profile + ")\n";
  if (o.policy == "warn") {
    notes += head + errors + "trainimg: preflight: TRAINIMG_PREFLIGHT=warn: the job runs\n";
    return path;
  }
  pyxis_release(env);
  throw PreflightRefused{notes + head + errors +
                         "trainimg: preflight: job step refused (TRAINIMG_PREFLIGHT=error)\n"};
}

void pyxis_release(const PyxisEnv& env) {
  std::string path = pyxis_sqsh_path(env);
  remove_if_present(path);
  remove_if_present(path + ".json");
  if (!env.shared_cache.empty()) {
    struct stat st {};
    if (::stat(env.shared_cache.c_str(), &st) == 0)
      PyxisCache(env.shared_cache, env.cache_trust)
          .release(env.job_uid + "." + env.job_id + "." + env.step_id, env.node);
  }
}

std::string pyxis_cache_warm(const std::string& uri, const std::string& dir, const std::string& trust,
                             std::ostream& log, bool& built) {
  if (!uri.starts_with("docker://") && !uri.starts_with("oci:"))
    throw Error(uri, "cache warm takes docker://REFERENCE or oci:DIR[:TAG] (an image with a manifest digest)",
                "jobs look entries up by manifest digest; other sources are imported per step");
  PyxisCache cache(dir, trust);
  if (!cache.trust().caller_writes_shared())
    log << "trainimg: cache warm: you are not trusted by the other users of " << dir
        << " (trusted: " << cache.trust().describe()
        << "; TRAINIMG_PYXIS_CACHE_TRUST): the entry goes to your own area, used by your jobs only\n";
  const std::string digest = shared_digest(uri);
  if (digest.empty()) throw Error(uri, "has no manifest digest");
  char host[256] = {};
  (void)gethostname(host, sizeof host - 1);
  // A lease of its own while it runs (prune keeps the entry), dropped at the end.
  const std::string step = "warm." + std::to_string(::getuid()) + "." + std::to_string(::getpid());
  SharedEntry e = cache.get(digest, shared_import_options(uri), std::string(host) + "." + step, log);
  cache.release(step, host);
  if (e.path.empty()) throw Error(dir, "the entry for " + digest + " cannot be written (see above)");
  built = e.built;
  return e.path;
}

}  // namespace trainimg::builder
