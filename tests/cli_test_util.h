// SPDX-License-Identifier: GPL-3.0-or-later
// What the CLI end-to-end tests share: run a shell command line (the
// trainimg binary, usually) and collect its exit status and output, and
// small file helpers. Header-only: every tests/*_test.cc is linked into one
// binary, so these are inline.
#pragma once

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace trainimg::testing {

struct CliResult {
  int rc;           ///< the exit status; -1 when killed by a signal
  std::string out;  ///< standard output (and whatever the command line redirects into it)
};

/// Runs `cmd` through sh (popen) and reads its standard output to the end.
inline CliResult sh(const std::string& cmd) {
  FILE* p = ::popen(cmd.c_str(), "r");
  if (!p) return {-1, {}};
  std::string out;
  std::array<char, 4096> buf;
  size_t n;
  while ((n = std::fread(buf.data(), 1, buf.size(), p)) > 0) out.append(buf.data(), n);
  int status = ::pclose(p);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

/// Runs the trainimg binary with `args` in directory `dir`, stderr folded
/// into stdout.
inline CliResult trainimg_in(const std::string& dir, const std::string& args) {
  return sh("cd '" + dir + "' && " + std::string(TRAINIMG_BIN) + " " + args + " 2>&1");
}

/// The whole content of a file ("" when unreadable).
inline std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

/// Writes `text` to `p`, creating its directory.
inline void put(const std::filesystem::path& p, const std::string& text) {
  if (p.has_parent_path()) std::filesystem::create_directories(p.parent_path());
  std::ofstream(p, std::ios::binary) << text;
}

/// The exit status and the two output streams of a command, kept apart.
struct SplitResult {
  int rc = -1;  ///< the exit status; -1 when killed by a signal
  std::string out, err;
};

/// Runs `cmd` through sh (std::system) with its standard output and error
/// sent to the files `scratch`/out and `scratch`/err, and reads them back.
inline SplitResult sh_split(const std::string& cmd, const std::filesystem::path& scratch) {
  const std::filesystem::path out = scratch / "out", err = scratch / "err";
  int status = std::system((cmd + " >'" + out.string() + "' 2>'" + err.string() + "'").c_str());
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, slurp(out), slurp(err)};
}

/// A fresh directory under the system's temporary directory, removed by
/// the destructor.
class TempDir {
 public:
  explicit TempDir(const std::string& prefix) {
    std::string tmpl = (std::filesystem::temp_directory_path() / (prefix + "-XXXXXX")).string();
    if (::mkdtemp(tmpl.data())) path_ = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    if (!path_.empty()) std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }
  std::string str() const { return path_.string(); }

 private:
  std::filesystem::path path_;
};

}  // namespace trainimg::testing
