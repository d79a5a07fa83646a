// SPDX-License-Identifier: GPL-3.0-or-later
#include "inspect/registry/blob_cache.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <ctime>

#include "common/error.h"
#include "inspect/sources/digest.h"

namespace trainimg::inspect::registry {
namespace {

void mkdirs(const std::string& path) {
  for (size_t i = 1; i <= path.size(); ++i) {
    if (i != path.size() && path[i] != '/') continue;
    std::string part = path.substr(0, i);
    if (mkdir(part.c_str(), 0755) != 0 && errno != EEXIST)
      throw_errno(part, "cannot create the cache directory");
  }
}

// Unlinks a path when it goes out of scope unless released.
struct Unlinker {
  std::string path;
  ~Unlinker() {
    if (!path.empty()) ::unlink(path.c_str());
  }
};

}  // namespace

std::string default_cache_dir() {
  if (const char* c = std::getenv("TRAINIMG_CACHE"); c && *c) return c;
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) return std::string(x) + "/trainimg";
  const char* home = std::getenv("HOME");
  return std::string(home && *home ? home : "/tmp") + "/.cache/trainimg";
}

BlobCache::BlobCache(std::string dir) : dir_(std::move(dir)) {
  while (dir_.size() > 1 && dir_.back() == '/') dir_.pop_back();
}

std::string BlobCache::blob_path(const std::string& digest) const {
  if (!is_sha256_digest(digest)) throw Error(dir_, "not a sha256 digest: '" + digest + "'");
  return dir_ + "/blobs/sha256/" + digest.substr(7);
}

UniqueFd BlobCache::open(const std::string& digest) const {
  if (!enabled()) return {};
  std::string path = blob_path(digest);
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
  if (fd) (void)::utimensat(AT_FDCWD, path.c_str(), nullptr, 0);  // last use, for prune
  return fd;
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
  const std::string hex = blob_path(digest).substr(dir_.size() + 14);
  mkdirs(dir_ + "/blobs/sha256");
  mkdirs(dir_ + "/locks");
  mkdirs(dir_ + "/tmp");
  std::string lock_path = dir_ + "/locks/" + hex + ".lock";
  UniqueFd lock(::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0666));
  if (!lock) throw_errno(lock_path, "cannot open the cache lock");
  while (flock(lock.get(), LOCK_EX) != 0)
    if (errno != EINTR) throw_errno(lock_path, "flock");
  // Another process may have published it while this one waited.
  if (UniqueFd hit = open(digest)) return hit;
  Unlinker partial{dir_ + "/tmp/" + hex + "." + std::to_string(getpid()) + ".partial"};
  UniqueFd fd(::open(partial.path.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644));
  if (!fd) throw_errno(partial.path, "cannot create a cache file");
  fill(fd.get());
  if (fdatasync(fd.get()) != 0) throw_errno(partial.path, "fdatasync");
  if (::rename(partial.path.c_str(), blob_path(digest).c_str()) != 0)
    throw_errno(blob_path(digest), "rename");
  partial.path.clear();
  if (lseek(fd.get(), 0, SEEK_SET) != 0) throw_errno(blob_path(digest), "lseek");
  return fd;
}

std::vector<CacheEntry> BlobCache::list() const {
  std::vector<CacheEntry> out;
  if (!enabled()) return out;
  std::string dir = dir_ + "/blobs/sha256";
  DIR* d = opendir(dir.c_str());
  if (!d) {
    if (errno == ENOENT) return out;
    throw_errno(dir, "cannot list the cache");
  }
  while (dirent* e = readdir(d)) {
    std::string digest = std::string("sha256:") + e->d_name;
    if (!is_sha256_digest(digest)) continue;
    struct stat st {};
    if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode)) continue;
    out.push_back({digest, static_cast<uint64_t>(st.st_size), static_cast<int64_t>(st.st_mtime)});
  }
  closedir(d);
  std::sort(out.begin(), out.end(), [](const CacheEntry& a, const CacheEntry& b) {
    return a.last_used != b.last_used ? a.last_used < b.last_used : a.digest < b.digest;
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
      std::string hex = e.digest.substr(7);
      std::string lock_path = dir_ + "/locks/" + hex + ".lock";
      UniqueFd lock(::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0666));
      if (lock && flock(lock.get(), LOCK_EX | LOCK_NB) != 0) {
        r.busy++;
      } else if (::unlink(blob_path(e.digest).c_str()) == 0) {
        removed = true;
        (void)::unlink(lock_path.c_str());
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

std::optional<uint64_t> parse_byte_size(const std::string& s) {
  if (s.empty()) return std::nullopt;
  std::string digits = s;
  uint64_t mult = 1;
  char last = static_cast<char>(std::toupper(static_cast<unsigned char>(s.back())));
  const std::string units = "KMGT";
  if (auto u = units.find(last); u != std::string::npos) {
    mult = uint64_t(1) << (10 * (u + 1));
    digits.pop_back();
  }
  if (digits.empty() || digits.size() > 12 || digits.find_first_not_of("0123456789") != std::string::npos)
    return std::nullopt;
  return std::stoull(digits) * mult;
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
