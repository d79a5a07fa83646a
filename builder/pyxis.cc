// SPDX-License-Identifier: GPL-3.0-or-later
#include "builder/pyxis.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>

#include "builder/import.h"
#include "common/error.h"

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

PyxisEnv pyxis_env(const std::function<const char*(const char*)>& getenv) {
  PyxisEnv e;
  const char* rt = getenv("PYXIS_RUNTIME_PATH");
  e.runtime_path = rt && *rt ? rt : "/run/pyxis";
  e.job_uid = component(getenv, "SLURM_JOB_UID", std::to_string(::getuid()));
  e.job_id = component(getenv, "SLURM_JOB_ID", "");
  e.step_id = component(getenv, "SLURM_STEP_ID", "");
  return e;
}

std::string pyxis_sqsh_path(const PyxisEnv& env) {
  return (std::filesystem::path(env.runtime_path) / env.job_uid / (env.job_id + "." + env.step_id + ".sqsh"))
      .lexically_normal()
      .string();
}

std::string pyxis_get(const std::string& uri, const PyxisEnv& env) {
  if (uri.starts_with("podman://"))
    throw Error(uri, "podman:// is not supported by trainimg import",
                "use docker://REGISTRY#IMAGE (straight from the registry) or dockerd://IMAGE");
  std::string path = std::filesystem::absolute(pyxis_sqsh_path(env)).string();
  std::string dir = std::filesystem::path(path).parent_path().string();
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw Error(dir, "cannot create directory: " + ec.message());
  ::chmod(dir.c_str(), 0700);
  ImportOptions o;
  o.source = uri;
  o.output = path;
  o.compressor = sqsh::Compressor::Zstd;
  o.level = 3;
  o.block_size = 1u << 20;
  o.force = true;     // a retried step replaces its own file, atomically
  o.inspect = false;  // the job is waiting; `trainimg inspect` is for the image's author
  import_image(o);
  return path;
}

void pyxis_release(const PyxisEnv& env) {
  std::string path = pyxis_sqsh_path(env);
  remove_if_present(path);
  remove_if_present(path + ".json");
}

}  // namespace trainimg::builder
