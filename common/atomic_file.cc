// SPDX-License-Identifier: GPL-3.0-or-later
#include "common/atomic_file.h"

#include <fcntl.h>
#include <stdio.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <iostream>
#include <mutex>
#include <random>
#include <string_view>
#include <vector>

#include "common/error.h"

namespace trainimg {

namespace {
std::string dir_of(const std::string& path) {
  auto p = std::filesystem::path(path).parent_path();
  return p.empty() ? std::string(".") : p.string();
}

constexpr char kPartial[] = ".partial-";
constexpr size_t kSuffix = 6;  // mkstemp's XXXXXX

// The process's umask, read without setting it. umask(2) reads only by
// setting: even for an instant that races with every other thread creating a
// file (made 0666 / 0777 in that window), and two such readers at once can
// leave the umask at 0 for good. Linux (>= 4.7) shows it in /proc/self/status;
// elsewhere the set-and-restore is at least serialised against itself.
mode_t process_umask() {
  if (int fd = ::open("/proc/self/status", O_RDONLY | O_CLOEXEC); fd >= 0) {
    char buf[4096];
    ssize_t n = ::read(fd, buf, sizeof buf - 1);
    ::close(fd);
    if (n > 0) {
      buf[n] = '\0';
      if (const char* at = std::strstr(buf, "\nUmask:")) {
        char* end = nullptr;
        unsigned long v = std::strtoul(at + 7, &end, 8);
        if (end != at + 7 && v <= 0777) return static_cast<mode_t>(v);
      }
    }
  }
  static std::mutex mu;
  std::lock_guard lock(mu);
  mode_t m = ::umask(0);
  ::umask(m);
  return m;
}

mode_t umasked(unsigned mode) {
  return static_cast<mode_t>(mode) & ~process_umask();
}

// Tests (and a user who must) can ask for the named partial file everywhere.
bool tmpfile_disabled() {
  const char* v = std::getenv("TRAINIMG_ATOMIC_NAMED");
  return v && *v && std::string_view(v) != "0";
}

// Links the unnamed inode `fd` to `name`: AT_EMPTY_PATH needs
// CAP_DAC_READ_SEARCH; unprivileged, the /proc/self/fd link is followed.
int link_fd(int fd, const std::string& name) {
  if (::linkat(fd, "", AT_FDCWD, name.c_str(), AT_EMPTY_PATH) == 0) return 0;
  if (errno == EEXIST) return -1;
  std::string proc = "/proc/self/fd/" + std::to_string(fd);
  return ::linkat(AT_FDCWD, proc.c_str(), AT_FDCWD, name.c_str(), AT_SYMLINK_FOLLOW);
}

std::string random_suffix() {
  static const char chars[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
  static std::random_device rd;
  std::string s;
  for (size_t i = 0; i < kSuffix; ++i) s += chars[rd() % (sizeof chars - 1)];
  return s;
}
}  // namespace

int remove_stale_partials(const std::string& target) noexcept {
  int removed = 0;
  try {
    std::filesystem::path t(target);
    const std::string prefix = t.filename().string() + kPartial;
    const std::string dir = dir_of(target);
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
      std::string name = e.path().filename().string();
      if (name.size() != prefix.size() + kSuffix || name.compare(0, prefix.size(), prefix) != 0) continue;
      std::string path = e.path().string();
      UniqueFd fd(::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
      if (!fd) continue;
      struct stat st, again;
      if (::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode)) continue;
      // A live writer holds the lock. One that has just created its file may
      // not hold it yet: an empty file younger than 2 s is left alone.
      if (::flock(fd.get(), LOCK_EX | LOCK_NB) != 0) continue;
      if (st.st_size == 0 && ::time(nullptr) - st.st_mtime < 2) continue;
      if (::lstat(path.c_str(), &again) != 0 || again.st_ino != st.st_ino || again.st_dev != st.st_dev)
        continue;
      if (::unlink(path.c_str()) == 0) ++removed;
    }
  } catch (...) {
  }
  return removed;
}

AtomicFile::AtomicFile(std::string target, bool replace, unsigned mode, bool named)
    : target_(std::move(target)), replace_(replace) {
  if (target_.empty()) throw Error("", "empty output path");
  struct stat st;
  if (::stat(target_.c_str(), &st) == 0 && S_ISDIR(st.st_mode))
    throw Error(target_, "output path is a directory");
  if (!replace_ && ::access(target_.c_str(), F_OK) == 0)
    throw Error(target_, "output exists", "pass --force to replace it atomically");
  remove_stale_partials(target_);
  if (!named && !tmpfile_disabled()) {
    int fd = ::open(dir_of(target_).c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, umasked(mode));
    if (fd >= 0) {
      fd_.reset(fd);
      anonymous_ = true;
      ::flock(fd, LOCK_EX | LOCK_NB);  // guards the TARGET.partial-* name --force links it to
      return;
    }
    // EOPNOTSUPP/EISDIR/EINVAL: no O_TMPFILE here; other errors (EACCES,
    // ENOENT) repeat below with the file's name in the message.
  }
  std::vector<char> tmpl(target_.begin(), target_.end());
  const char suffix[] = ".partial-XXXXXX";
  tmpl.insert(tmpl.end(), suffix, suffix + sizeof(suffix));  // includes NUL
  int fd = ::mkstemp(tmpl.data());
  if (fd < 0) throw_errno(target_, "cannot create temporary file in " + dir_of(target_));
  fd_.reset(fd);
  partial_ = tmpl.data();
  ::flock(fd, LOCK_EX | LOCK_NB);  // held while this writer lives: remove_stale_partials() skips it
  ::fchmod(fd, umasked(mode));
}

AtomicFile::~AtomicFile() {
  discard();
}

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
  if (anonymous_ && !replace_) {
    // linkat never replaces: a target that appeared meanwhile is refused.
    if (link_fd(fd_.get(), target_) != 0) {
      if (errno == EEXIST) throw Error(target_, "output exists", "pass --force to replace it atomically");
      throw_errno(target_, "link failed");
    }
  } else if (anonymous_) {
    // rename(2) replaces atomically but needs a name: link the inode to a
    // fresh partial name first. A kill between the two leaves that name,
    // which the next writer of the target removes.
    std::string name;
    for (int tries = 0;; ++tries) {
      name = target_ + kPartial + random_suffix();
      if (link_fd(fd_.get(), name) == 0) break;
      if (errno != EEXIST || tries > 100) throw_errno(target_, "link failed");
    }
    if (::rename(name.c_str(), target_.c_str()) != 0) {
      int saved = errno;
      ::unlink(name.c_str());
      errno = saved;
      throw_errno(target_, "rename failed");
    }
  } else if (replace_) {
    if (::rename(partial_.c_str(), target_.c_str()) != 0) throw_errno(target_, "rename failed");
  } else {
    // renameat2(RENAME_NOREPLACE): never replace a target that appeared
    // while we were writing.
    if (::renameat2(AT_FDCWD, partial_.c_str(), AT_FDCWD, target_.c_str(), RENAME_NOREPLACE) != 0) {
      if (errno == EEXIST) throw Error(target_, "output exists", "pass --force to replace it atomically");
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
