// SPDX-License-Identifier: GPL-3.0-or-later
#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <ctime>

#include "common/error.h"
#include "common/shared_dir.h"
#include "inspect/registry/registry.h"
#include "common/sha256.h"

namespace trainimg::inspect::registry {
namespace {

void mkdirs(const std::string& path) {
  make_dirs(path, 0755);
}

// Unlinks a path when it goes out of scope unless released.
struct Unlinker {
  std::string path;
  ~Unlinker() {
    if (!path.empty()) ::unlink(path.c_str());
  }
};

}  // namespace

void make_dirs(const std::string& path, unsigned mode) {
  for (size_t i = 1; i <= path.size(); ++i) {
    if (i != path.size() && path[i] != '/') continue;
    std::string part = path.substr(0, i);
    if (mkdir(part.c_str(), static_cast<mode_t>(mode)) == 0) {
      (void)::chmod(part.c_str(), static_cast<mode_t>(mode));
    } else if (errno != EEXIST) {
      throw_errno(part, "cannot create the cache directory");
    }
  }
}

PathLock PathLock::take(const std::string& path, bool shared, bool wait,
                        const std::function<void(unsigned)>& on_wait) {
  const auto start = std::chrono::steady_clock::now();
  unsigned reported = 0;
  for (;;) {
    UniqueFd fd(::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0666));
    if (!fd && (errno == EACCES || errno == EPERM)) {  // another user's lock file (in a 1777 directory)
      const int create_errno = errno;
      fd.reset(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW));
      // No such file: it could not be created (a directory the caller cannot
      // write): that is the error to report, not ENOENT.
      if (!fd && errno == ENOENT) errno = create_errno;
    }
    if (!fd) throw_errno(path, "cannot open the lock file");
    const int op = shared ? LOCK_SH : LOCK_EX;
    for (;;) {
      if (flock(fd.get(), op | ((wait && !on_wait) ? 0 : LOCK_NB)) == 0) break;
      if (errno == EINTR) continue;
      if (errno != EWOULDBLOCK) throw_errno(path, "flock");
      if (!wait) return {};
      usleep(200000);
      auto s = static_cast<unsigned>(
          std::chrono::duration_cast<std::chrono::seconds>(std::chrono::steady_clock::now() - start).count());
      if (s > reported) {
        reported = s;
        on_wait(s);
      }
    }
    struct stat held {
    }, named{};
    if (fstat(fd.get(), &held) == 0 && ::stat(path.c_str(), &named) == 0 && held.st_dev == named.st_dev &&
        held.st_ino == named.st_ino) {
      PathLock l;
      l.path_ = path;
      l.fd_ = std::move(fd);
      return l;
    }
    // Its holder removed (or replaced) the file while this one waited: lock the current one.
  }
}

PathLock PathLock::acquire(const std::string& path, bool shared,
                           const std::function<void(unsigned waited_s)>& on_wait) {
  return take(path, shared, true, on_wait);
}

PathLock PathLock::try_acquire(const std::string& path, bool shared) {
  return take(path, shared, false, {});
}

void PathLock::remove() {
  if (!fd_) return;
  (void)::unlink(path_.c_str());  // another user's file in a sticky directory stays: harmless
  fd_.reset();
}

std::string default_cache_dir() {
  if (const char* c = std::getenv("TRAINIMG_CACHE"); c && *c) return c;
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) return std::string(x) + "/trainimg";
  const char* home = std::getenv("HOME");
  return std::string(home && *home ? home : "/tmp") + "/.cache/trainimg";
}

BlobCache::BlobCache(std::string dir) : dir_(std::move(dir)) {
  while (dir_.size() > 1 && dir_.back() == '/') dir_.pop_back();
  write_dir_ = dir_;
  if (dir_.empty()) return;
  struct stat st {};
  uid_t owner = ::geteuid();  // a directory that does not exist yet will be the caller's
  if (::stat(dir_.c_str(), &st) == 0) {
    check_shared_dir(dir_, "TRAINIMG_CACHE");
    owner = st.st_uid;
  }
  const char* spec = std::getenv("TRAINIMG_CACHE_TRUST");
  trust_ = Trust::parse(spec ? spec : "", "TRAINIMG_CACHE_TRUST", owner);
  if (!trust_->caller_writes_shared()) write_dir_ = dir_ + "/user-" + std::to_string(::geteuid());
}

std::string BlobCache::blob_path(const std::string& area, const std::string& digest) const {
  if (!is_sha256_digest(digest)) throw Error(dir_, "not a sha256 digest: '" + digest + "'");
  return area + "/blobs/sha256/" + digest.substr(7);
}

std::vector<std::string> BlobCache::areas() const {
  std::vector<std::string> out{dir_};
  if (::geteuid() == 0) {
    for (const auto& a : user_areas(dir_)) out.push_back(a);
  } else if (write_dir_ != dir_) {
    out.push_back(write_dir_);
  }
  return out;
}

UniqueFd BlobCache::open(const std::string& digest) const {
  if (!enabled()) return {};
  for (const std::string& area : {dir_, write_dir_}) {
    std::string path = blob_path(area, digest);
    UniqueFd fd(::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
    struct stat st {};
    // Only a blob an account the caller trusts wrote, and nobody else can
    // change: the cache's blobs are not hashed again when they are read.
    if (fd && fstat(fd.get(), &st) == 0 && trust_->trusts_file(st) && S_ISREG(st.st_mode) &&
        (area == dir_ || st.st_uid == ::geteuid())) {
      (void)::utimensat(AT_FDCWD, path.c_str(), nullptr, 0);  // last use, for prune
      return fd;
    }
    if (area == write_dir_) break;
  }
  return {};
}

UniqueFd BlobCache::get(const std::string& digest, const std::function<void(int fd)>& fill) const {
  if (!enabled()) {
    const char* tmp = std::getenv("TMPDIR");
    std::string dir = tmp && *tmp ? tmp : "/tmp";
    UniqueFd fd(::open(dir.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600));
    if (!fd) throw_errno(dir, "cannot create a temporary file for a blob");
    fill(fd.get());
    if (lseek(fd.get(), 0, SEEK_SET) != 0) throw_errno(dir, "lseek");
    return fd;
  }
  if (UniqueFd hit = open(digest)) return hit;
  if (write_dir_ != dir_) {
    mkdirs(dir_);
    (void)own_area(dir_);  // DIR/user-UID, 0700, the caller's or an error
  }
  const std::string target = blob_path(write_dir_, digest);
  const std::string hex = digest.substr(7);
  mkdirs(write_dir_ + "/blobs/sha256");
  mkdirs(write_dir_ + "/locks");
  mkdirs(write_dir_ + "/tmp");
  PathLock lock = PathLock::acquire(write_dir_ + "/locks/" + hex + ".lock", /*shared=*/false);
  // Another process may have published it while this one waited.
  if (UniqueFd hit = open(digest)) return hit;
  Unlinker partial{write_dir_ + "/tmp/" + hex + "." + std::to_string(getpid()) + ".partial"};
  UniqueFd fd(::open(partial.path.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644));
  if (!fd) throw_errno(partial.path, "cannot create a cache file");
  try {
    fill(fd.get());
  } catch (...) {
    lock.remove();  // nothing named after a digest that failed to verify
    throw;
  }
  if (fdatasync(fd.get()) != 0) throw_errno(partial.path, "fdatasync");
  // A file another account left under the name (not trusted, so not used) is replaced.
  if (::rename(partial.path.c_str(), target.c_str()) != 0) throw_errno(target, "rename");
  partial.path.clear();
  if (lseek(fd.get(), 0, SEEK_SET) != 0) throw_errno(target, "lseek");
  return fd;
}

std::vector<CacheEntry> BlobCache::list() const {
  std::vector<CacheEntry> out;
  if (!enabled()) return out;
  for (const auto& area : areas()) {
    std::string dir = area + "/blobs/sha256";
    DIR* d = opendir(dir.c_str());
    if (!d) {
      if (errno == ENOENT || area != dir_) continue;
      throw_errno(dir, "cannot list the cache");
    }
    while (dirent* e = readdir(d)) {
      std::string digest = std::string("sha256:") + e->d_name;
      if (!is_sha256_digest(digest)) continue;
      struct stat st {};
      if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode)) continue;
      out.push_back({digest, static_cast<uint64_t>(st.st_size), static_cast<int64_t>(st.st_mtime), area});
    }
    closedir(d);
  }
  std::sort(out.begin(), out.end(), [](const CacheEntry& a, const CacheEntry& b) {
    return a.last_used != b.last_used ? a.last_used < b.last_used
                                      : (a.digest != b.digest ? a.digest < b.digest : a.area < b.area);
  });
  return out;
}

PruneResult BlobCache::prune(std::optional<uint64_t> max_size, std::optional<int64_t> older_than_s) const {
  PruneResult r;
  auto entries = list();  // least recently used first
  uint64_t total = 0;
  for (const auto& e : entries) total += e.size;
  const int64_t now = static_cast<int64_t>(std::time(nullptr));
  for (const auto& e : entries) {
    bool old = older_than_s && now - e.last_used > *older_than_s;
    bool over = max_size && total > *max_size;
    bool removed = false;
    if (old || over) {
      PathLock lock = PathLock::try_acquire(e.area + "/locks/" + e.digest.substr(7) + ".lock", false);
      if (!lock.held()) {
        r.busy++;
      } else if (::unlink(blob_path(e.area, e.digest).c_str()) == 0) {
        removed = true;
        lock.remove();
      }
    }
    if (removed) {
      r.removed++;
      r.removed_bytes += e.size;
      total -= e.size;
    } else {
      r.kept++;
      r.kept_bytes += e.size;
    }
  }
  return r;
}

std::optional<int64_t> parse_duration(const std::string& s) {
  if (s.size() < 2) return std::nullopt;
  int64_t mult = 0;
  switch (s.back()) {
    case 's': mult = 1; break;
    case 'm': mult = 60; break;
    case 'h': mult = 3600; break;
    case 'd': mult = 86400; break;
    case 'w': mult = 7 * 86400; break;
    default: return std::nullopt;
  }
  std::string digits = s.substr(0, s.size() - 1);
  if (digits.size() > 9 || digits.find_first_not_of("0123456789") != std::string::npos) return std::nullopt;
  return std::stoll(digits) * mult;
}

}  // namespace trainimg::inspect::registry
