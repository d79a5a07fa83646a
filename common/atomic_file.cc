// SPDX-License-Identifier: GPL-3.0-or-later
#include "common/atomic_file.h"

#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <vector>

#include "common/error.h"

namespace trainimg {

namespace {
std::string dir_of(const std::string& path) {
  auto p = std::filesystem::path(path).parent_path();
  return p.empty() ? std::string(".") : p.string();
}
}  // namespace

AtomicFile::AtomicFile(std::string target, bool replace, unsigned mode)
    : target_(std::move(target)), replace_(replace) {
  if (target_.empty()) throw Error("", "empty output path");
  struct stat st;
  if (::stat(target_.c_str(), &st) == 0 && S_ISDIR(st.st_mode))
    throw Error(target_, "output path is a directory");
  if (!replace_ && ::access(target_.c_str(), F_OK) == 0)
    throw Error(target_, "output exists", "pass --force to replace it atomically");
  std::vector<char> tmpl(target_.begin(), target_.end());
  const char suffix[] = ".partial-XXXXXX";
  tmpl.insert(tmpl.end(), suffix, suffix + sizeof(suffix));  // includes NUL
  int fd = ::mkstemp(tmpl.data());
  if (fd < 0) throw_errno(target_, "cannot create temporary file in " + dir_of(target_));
  fd_.reset(fd);
  partial_ = tmpl.data();
  ::fchmod(fd, mode & ~[] { mode_t m = ::umask(0); ::umask(m); return m; }());
}

AtomicFile::~AtomicFile() { discard(); }

void AtomicFile::discard() noexcept {
  fd_.reset();
  if (!committed_ && !partial_.empty()) {
    ::unlink(partial_.c_str());
    partial_.clear();
  }
}

void AtomicFile::write(std::string_view data) {
  while (!data.empty()) {
    ssize_t n = ::write(fd_.get(), data.data(), data.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      throw_errno(target_, "write failed");
    }
    data.remove_prefix(static_cast<size_t>(n));
  }
}

void AtomicFile::commit() {
  if (committed_) return;
  if (::fsync(fd_.get()) != 0) throw_errno(target_, "fsync failed");
  if (replace_) {
    if (::rename(partial_.c_str(), target_.c_str()) != 0) throw_errno(target_, "rename failed");
  } else {
    // renameat2(RENAME_NOREPLACE): never replace a target that appeared
    // while we were writing.
    if (::renameat2(AT_FDCWD, partial_.c_str(), AT_FDCWD, target_.c_str(), RENAME_NOREPLACE) != 0) {
      if (errno == EEXIST)
        throw Error(target_, "output exists", "pass --force to replace it atomically");
      throw_errno(target_, "rename failed");
    }
  }
  committed_ = true;
  fd_.reset();
  UniqueFd dir(::open(dir_of(target_).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (dir) ::fsync(dir.get());
}

void write_file_atomic(const std::string& path, std::string_view data, bool replace) {
  if (path == "-") {
    std::cout << data;
    std::cout.flush();
    if (!std::cout) throw Error("<stdout>", "write failed");
    return;
  }
  AtomicFile f(path, replace);
  f.write(data);
  f.commit();
}

}  // namespace trainimg
