// SPDX-License-Identifier: GPL-3.0-or-later
// Helpers shared by the libFuzzer targets (tests/fuzz/fuzz_*.cc, see
// docs/fuzzing.md). Every target catches trainimg::Error, the one way a
// reader may refuse input; anything else (another exception, a crash, a
// sanitizer report, a hang) is a finding.
#pragma once

#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "common/error.h"
#include "common/fd.h"
#include "inspect/registry/registry.h"

namespace trainimg::fuzz {

inline std::string_view as_view(const uint8_t* data, size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

/// The input as an anonymous in-memory file (memfd); path() names it for
/// readers that take a path ("/proc/self/fd/N").
class MemFile {
 public:
  MemFile(std::string_view bytes) : fd_(::memfd_create("fuzz-input", MFD_CLOEXEC)) {
    if (!fd_) std::abort();
    while (!bytes.empty()) {
      ssize_t n = ::write(fd_.get(), bytes.data(), bytes.size());
      if (n <= 0) std::abort();
      bytes.remove_prefix(static_cast<size_t>(n));
    }
    ::lseek(fd_.get(), 0, SEEK_SET);
  }
  int fd() const { return fd_.get(); }
  std::string path() const { return "/proc/self/fd/" + std::to_string(fd_.get()); }

 private:
  UniqueFd fd_;
};

/// A per-process scratch directory (removed at exit), emptied by clear().
class ScratchDir {
 public:
  ScratchDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "trainimg-fuzz-XXXXXX").string();
    if (!::mkdtemp(tmpl.data())) std::abort();
    path_ = tmpl;
  }
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }
  void clear() {
    std::error_code ec;
    for (auto& e : std::filesystem::directory_iterator(path_, ec)) std::filesystem::remove_all(e.path(), ec);
  }

 private:
  std::string path_;
};

/// Splits `in` at every occurrence of `sep`.
inline std::vector<std::string_view> split(std::string_view in, std::string_view sep) {
  std::vector<std::string_view> parts;
  for (;;) {
    size_t at = in.find(sep);
    if (at == std::string_view::npos) break;
    parts.push_back(in.substr(0, at));
    in.remove_prefix(at + sep.size());
  }
  parts.push_back(in);
  return parts;
}

/// Replaces every `from` in `s` by `to`.
inline void replace_all(std::string& s, const std::string& from, const std::string& to) {
  for (size_t at = 0; (at = s.find(from, at)) != std::string::npos; at += to.size())
    s.replace(at, from.size(), to);
}

/// Blob parts that name each other by digest: in part i, "@DN@" becomes
/// "sha256:<hex of part N>" and "@SN@" part N's size, for every N > i
/// (filled from the last part backwards), so that mutations reach the
/// parsers behind the digest checks. Returns each part's "sha256:<hex>".
inline std::vector<std::string> link_parts(std::vector<std::string>& parts) {
  std::vector<std::string> digest(parts.size());
  for (size_t i = parts.size(); i-- > 0;) {
    for (size_t j = i + 1; j < parts.size(); ++j) {
      replace_all(parts[i], "@D" + std::to_string(j) + "@", digest[j]);
      replace_all(parts[i], "@S" + std::to_string(j) + "@", std::to_string(parts[j].size()));
    }
    digest[i] = trainimg::sha256_digest(parts[i]);
  }
  return digest;
}

}  // namespace trainimg::fuzz
