// SPDX-License-Identifier: GPL-3.0-or-later
#include "builder/import/via_enroot.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <sstream>

#include "builder/publish/publish.h"
#include "common/error.h"
#include "common/fd.h"
#include "common/version_info.h"

namespace trainimg::builder {

std::string find_on_path(const std::string& name) {
  const char* path = std::getenv("PATH");
  std::istringstream dirs(path ? path : "/usr/bin:/bin");
  std::string dir;
  while (std::getline(dirs, dir, ':')) {
    std::string full = (dir.empty() ? "." : dir) + "/" + name;
    if (::access(full.c_str(), X_OK) == 0) return full;
  }
  return "";
}

namespace {

// Runs argv with stdout sent to stderr (stdout is for the published path).
int run_tool(const std::vector<std::string>& argv) {
  pid_t pid = ::fork();
  if (pid < 0) throw_errno(argv[0], "fork failed");
  if (pid == 0) {
    ::dup2(STDERR_FILENO, STDOUT_FILENO);
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    ::execv(args[0], args.data());
    _exit(127);
  }
  int st = 0;
  while (::waitpid(pid, &st, 0) < 0) {
    if (errno != EINTR) throw_errno(argv[0], "waitpid failed");
    // A signal reached us (and enroot, same process group): wait for it to end.
  }
  if (WIFSIGNALED(st)) return 128 + WTERMSIG(st);
  return WEXITSTATUS(st);
}

// Removes the name enroot writes to, and keeps the handler aware of it.
struct EnrootOutput {
  std::string path;
  int slot;
  explicit EnrootOutput(std::string p) : path(std::move(p)), slot(SignalGuard::track(path)) {}
  ~EnrootOutput() {
    ::unlink(path.c_str());
    SignalGuard::untrack(slot);
  }
};

}  // namespace

ImportResult import_via_enroot(const ImportOptions& opt, const ImportProgressFn& progress) {
  if (!(opt.source.starts_with("dockerd://") || opt.source.starts_with("docker://") ||
        opt.source.starts_with("podman://")))
    throw Error(opt.source, "--via enroot takes enroot's URIs only",
                "use dockerd://IMAGE, docker://[USER@][REGISTRY#]IMAGE[:TAG] or podman://IMAGE");
  std::string enroot = find_on_path("enroot");
  if (enroot.empty())
    throw Error("enroot", "not installed (not on PATH)",
                "install enroot, or import natively without --via enroot");
  SignalGuard guard;
  ImportResult r;
  r.output = opt.output;
  PartialOutput out(opt.output, opt.force, /*named=*/true);  // enroot's file is renamed onto it
  // enroot refuses an existing file, so it gets a fresh name beside ours.
  EnrootOutput tmp(out.partial_path() + ".enroot");
  if (progress) {
    ImportProgress p;
    p.phase = "enroot";
    progress(p);
  }
  int rc = run_tool({enroot, "import", "-o", tmp.path, opt.source});
  check_interrupted(opt.source);
  if (rc != 0) throw Error(opt.source, "enroot import failed with exit status " + std::to_string(rc));
  if (::rename(tmp.path.c_str(), out.partial_path().c_str()) != 0) throw_errno(tmp.path, "rename failed");
  {
    UniqueFd fd(::open(out.partial_path().c_str(), O_RDONLY | O_CLOEXEC));
    if (!fd) throw_errno(out.partial_path(), "cannot open enroot's output");
    if (progress) {
      ImportProgress p;
      p.phase = "verify";
      progress(p);
    }
    r.info = sqsh::verify(fd.get(), opt.output);
  }
  out.commit();
  struct stat st {};
  if (::stat(opt.output.c_str(), &st) == 0) r.image_bytes = static_cast<uint64_t>(st.st_size);
  nlohmann::ordered_json j;
  j["schema"] = "trainimg.import/v1";
  j["image"] = std::filesystem::absolute(opt.output).lexically_normal().string();
  j["source"] = opt.source;
  j["source_kind"] = "enroot";
  j["trainimg_version"] = TRAINIMG_VERSION;
  j["via"] = "enroot";
  j["compression"] = {{"algorithm", std::string(sqsh::to_string(r.info.compressor))},
                      {"block_size", r.info.block_size},
                      {"data_compressed", r.info.data_compressed}};
  j["sizes"] = {{"image_bytes", r.image_bytes}, {"inodes", r.info.inode_count}};
  if (opt.inspect) j["inspect"] = inspect_verdict(opt.output, r.report);
  r.sidecar = j;
  write_sidecar(opt.output, j);
  return r;
}

}  // namespace trainimg::builder
