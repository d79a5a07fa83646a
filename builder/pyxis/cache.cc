// SPDX-License-Identifier: GPL-3.0-or-later
#include "builder/pyxis/cache.h"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <fstream>
#include <ostream>
#include <stdexcept>

#include "builder/import/import.h"
#include "builder/publish/publish.h"
#include "common/error.h"
#include "common/sha256.h"
#include "inspect/registry/registry.h"

namespace trainimg::builder {
namespace {

using inspect::registry::make_dirs;
using inspect::registry::PathLock;
using Json = nlohmann::ordered_json;

constexpr unsigned kShared = 01777;

std::vector<std::string> names_in(const std::string& dir) {
  std::vector<std::string> out;
  DIR* d = opendir(dir.c_str());
  if (!d) return out;
  while (dirent* e = readdir(d))
    if (e->d_name[0] != '.') out.emplace_back(e->d_name);
  closedir(d);
  std::sort(out.begin(), out.end());
  return out;
}

// /proc/PID/stat: "PID (COMM) STATE PPID ...".
bool proc_stat(pid_t pid, std::string& comm, pid_t& ppid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string s((std::istreambuf_iterator<char>(in)), {});
  auto open = s.find('('), close = s.rfind(')');
  if (open == std::string::npos || close == std::string::npos || close + 4 > s.size()) return false;
  comm = s.substr(open + 1, close - open - 1);
  ppid = static_cast<pid_t>(std::atol(s.c_str() + close + 4));
  return true;
}

// The process the lease lives with: the importer's caller (Pyxis's
// slurmstepd), skipping wrapper shells (`trainimg-pyxis-importer` is often a
// script that does not exec).
pid_t lease_owner() {
  pid_t p = getppid();
  for (int i = 0; i < 4 && p > 1; ++i) {
    std::string comm;
    pid_t up = 0;
    if (!proc_stat(p, comm, up)) break;
    if (comm != "sh" && comm != "bash" && comm != "dash" && comm != "env") break;
    p = up;
  }
  return p;
}

// The keeper: holds the lease's flock (inherited, fd 3) until the lease file
// is unlinked (release) or the owner exits; then it removes the lease if it
// still names this file. Async-signal-safe calls only (forked from a process
// that may have threads).
[[noreturn]] void keep_lease(int fd, pid_t owner, const char* path) {
  int null = ::open("/dev/null", O_RDWR);
  if (null >= 0) {
    dup2(null, 0);
    dup2(null, 1);
    dup2(null, 2);
  }
  if (fd != 3) {
    dup2(fd, 3);
    ::close(fd);
  }
  syscall(SYS_close_range, 4u, ~0u, 0u);  // no pipe of Pyxis's, no entry lock kept open
  {  // "keeper PID" at the end of the lease, for people (and tests) who look
    char line[32] = "keeper ";
    size_t n = 7;
    char digits[16];
    size_t d = 0;
    for (pid_t p = getpid(); p > 0 && d < sizeof digits; p /= 10)
      digits[d++] = static_cast<char>('0' + p % 10);
    while (d) line[n++] = digits[--d];
    line[n++] = '\n';
    struct stat now {};
    if (fstat(3, &now) == 0) (void)pwrite(3, line, n, now.st_size);
  }
  int pidfd = static_cast<int>(syscall(SYS_pidfd_open, owner, 0));
  struct stat st {};
  for (;;) {
    if (fstat(3, &st) != 0 || st.st_nlink == 0) _exit(0);  // released
    if (pidfd >= 0) {
      struct pollfd p = {pidfd, POLLIN, 0};
      if (poll(&p, 1, 1000) > 0) break;
    } else {
      sleep(1);
      if (owner > 1 && kill(owner, 0) != 0 && errno == ESRCH) break;
    }
  }
  struct stat named {};
  if (::stat(path, &named) == 0 && named.st_ino == st.st_ino && named.st_dev == st.st_dev) ::unlink(path);
  _exit(0);
}

// Creates AREA/leases/NAME@ID holding a shared flock, and the keeper that
// keeps holding it after this process exits.
void take_lease(const std::string& path, const std::string& owner_line) {
  std::string tmp = path + ".new" + std::to_string(getpid());
  UniqueFd fd(::open(tmp.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644));
  if (!fd) throw_errno(tmp, "cannot create the lease");
  if (flock(fd.get(), LOCK_SH) != 0) throw_errno(tmp, "flock");
  if (::write(fd.get(), owner_line.data(), owner_line.size()) < 0) throw_errno(tmp, "write");
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    ::unlink(tmp.c_str());
    throw_errno(path, "cannot publish the lease");
  }
  const pid_t owner = lease_owner();
  pid_t child = fork();
  if (child < 0) throw_errno(path, "fork");
  if (child == 0) {
    setsid();
    if (fork() == 0) keep_lease(fd.get(), owner, path.c_str());
    _exit(0);
  }
  while (waitpid(child, nullptr, 0) < 0 && errno == EINTR) {
  }
}

// A lease is live while its keeper holds the flock. Never creates the file.
bool is_live_lease(const std::string& path) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW));
  if (!fd) return false;
  return flock(fd.get(), LOCK_EX | LOCK_NB) != 0 && errno == EWOULDBLOCK;
}

// Removes a lease whose keeper is gone (still the same file once locked).
bool remove_stale_lease(const std::string& path) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW));
  if (!fd || flock(fd.get(), LOCK_EX | LOCK_NB) != 0) return false;
  struct stat held {
  }, named{};
  if (fstat(fd.get(), &held) != 0 || ::stat(path.c_str(), &named) != 0 || held.st_ino != named.st_ino ||
      held.st_dev != named.st_dev)
    return false;
  return ::unlink(path.c_str()) == 0;
}

}  // namespace

PyxisCache::PyxisCache(std::string dir, const std::string& trust_spec) : dir_(std::move(dir)) {
  while (dir_.size() > 1 && dir_.back() == '/') dir_.pop_back();
  struct stat st {};
  if (::stat(dir_.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
    throw Error(
        dir_, "the shared Pyxis cache is not a directory",
        "create it once with mode 1777 (mkdir -m 1777 DIR), like /tmp, or unset TRAINIMG_PYXIS_CACHE");
  check_shared_dir(dir_, "TRAINIMG_PYXIS_CACHE");
  trust_ = Trust::parse(trust_spec, "TRAINIMG_PYXIS_CACHE_TRUST", st.st_uid);
}

std::string PyxisCache::entry_name(const std::string& digest, const ImportOptions& o) {
  if (!is_sha256_digest(digest)) throw Error(digest, "not a sha256 manifest digest");
  std::string comp(sqsh::to_string(o.compressor));
  std::string bs = o.block_size % (1u << 20) == 0 ? std::to_string(o.block_size >> 20) + "M"
                                                  : std::to_string(o.block_size >> 10) + "K";
  std::string name =
      "sha256-" + digest.substr(7) + "-" + comp + (o.level ? std::to_string(*o.level) : "") + "-" + bs;
  if (o.keep_xattrs) name += "-xattrs";
  if (o.source_date_epoch) name += "-sde" + std::to_string(*o.source_date_epoch);
  return name;
}

namespace {

// Reads a sidecar through an open descriptor (no symlink), at most 16 MiB,
// nested at most 32 levels (a deeper one is hostile, and copying it would
// recurse as deep). Throws on anything that does not parse.
Json read_sidecar(int fd) {
  std::string text;
  char buf[65536];
  for (ssize_t n; (n = ::read(fd, buf, sizeof buf)) > 0 && text.size() < (16u << 20);)
    text.append(buf, static_cast<size_t>(n));
  return Json::parse(text, [](int depth, Json::parse_event_t, Json&) {
    if (depth > 32) throw std::runtime_error("nested too deep");
    return true;
  });
}

// Whose files the caller may use in `area`: the top level by the site's
// trust; a user's own area only its owner (and root, for ls/verify/prune).
bool owner_ok(const Trust& trust, const std::string& top, const std::string& area, uid_t owner) {
  if (area == top) return trust.trusts(owner);
  return area == top + "/user-" + std::to_string(owner) && (owner == ::geteuid() || ::geteuid() == 0);
}

// The sidecar, when the entry's file and sidecar are owned by an account
// the caller may trust in `area`, nobody else can write them, and the
// sidecar vouches for this digest, file name, size and options.
std::optional<Json> trusted_sidecar(const Trust& trust, const std::string& top, const std::string& area,
                                    const std::string& sqsh, const std::string& digest,
                                    const ImportOptions& o) {
  struct stat st {};
  if (::lstat(sqsh.c_str(), &st) != 0 || !S_ISREG(st.st_mode) || (st.st_mode & 022) ||
      !owner_ok(trust, top, area, st.st_uid))
    return std::nullopt;
  UniqueFd fd(::open(sidecar_path(sqsh).c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
  struct stat side {};
  if (!fd || fstat(fd.get(), &side) != 0 || !S_ISREG(side.st_mode) || (side.st_mode & 022) ||
      side.st_uid != st.st_uid)
    return std::nullopt;
  try {
    Json j = read_sidecar(fd.get());
    const std::string base = sqsh.substr(sqsh.rfind('/') + 1);
    std::string image = j.value("image", "");
    bool ok = j.value("image_digest", "") == digest && image.size() >= base.size() &&
              image.substr(image.size() - base.size()) == base &&
              j["sizes"].value("image_bytes", uint64_t(0)) == static_cast<uint64_t>(st.st_size) &&
              j["compression"].value("requested", "") == std::string(sqsh::to_string(o.compressor)) &&
              j["compression"].value("block_size", 0u) == o.block_size &&
              j.value("xattrs_kept", false) == o.keep_xattrs;
    if (ok) return j;
  } catch (const std::exception&) {  // damaged or hostile: not trusted
  }
  return std::nullopt;
}

void remove_partials(const std::string& dir, const std::string& name) {
  for (const auto& f : names_in(dir))
    if (f.starts_with(name + ".sqsh") && f.find("partial") != std::string::npos)
      (void)::unlink((dir + "/" + f).c_str());
}

void touch_used(const std::string& dir, const std::string& name) {
  std::string p = dir + "/used/" + name + "." + std::to_string(getuid());
  UniqueFd fd(::open(p.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644));
  if (fd) (void)::futimens(fd.get(), nullptr);
}

std::string host_name() {
  char host[256] = {};
  if (gethostname(host, sizeof host - 1) != 0 || !*host) return "localhost";
  return host;
}

// A subdirectory of the top level that an untrusted caller relies on
// (locks, leases): made by a trusted account, and sticky if others write it.
bool trusted_subdir(const Trust& trust, const std::string& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode) && trust.trusts(st.st_uid) &&
         (!(st.st_mode & S_IWOTH) || (st.st_mode & S_ISVTX));
}

}  // namespace

SharedEntry PyxisCache::get(const std::string& digest, ImportOptions o, const std::string& lease_id,
                            std::ostream& log) {
  const std::string name = entry_name(digest, o);
  auto waiting = [&](unsigned s) {
    if (s == 1 || s % 10 == 0)
      log << "trainimg: pyxis cache: waiting " << s << " s for another import of " << name << " in " << dir_
          << "\n"
          << std::flush;
  };
  std::string area = dir_;
  if (!trust_.caller_writes_shared()) {
    // A trusted top-level entry (published by the site's CI, root, ...),
    // looked up without creating anything there.
    if (trusted_subdir(trust_, dir_ + "/locks") && trusted_subdir(trust_, dir_ + "/leases")) {
      const std::string sqsh = dir_ + "/" + name + ".sqsh";
      const std::string lease = dir_ + "/leases/" + name + "@" + lease_id;
      take_lease(lease, host_name() + " pid " + std::to_string(getpid()) + " owner " +
                            std::to_string(lease_owner()) + " since " + std::to_string(std::time(nullptr)) +
                            "\n");
      try {
        PathLock sh = PathLock::acquire(dir_ + "/locks/" + name + ".lock", /*shared=*/true, waiting);
        if (auto j = trusted_sidecar(trust_, dir_, dir_, sqsh, digest, o)) {
          touch_used(dir_, name);
          return {sqsh, *j, false};
        }
      } catch (...) {
        (void)::unlink(lease.c_str());
        throw;
      }
      (void)::unlink(lease.c_str());
    }
    try {
      area = own_area(dir_);
    } catch (const Error& e) {
      log << "trainimg: pyxis cache: " << e.what() << "; importing a private copy\n";
      return {};
    }
  }
  const unsigned sub_mode = area == dir_ ? kShared : 0700;
  for (const char* sub : {"/locks", "/leases", "/used"}) make_dirs(area + sub, sub_mode);
  const std::string sqsh = area + "/" + name + ".sqsh";
  const std::string lock_path = area + "/locks/" + name + ".lock";
  const std::string lease = area + "/leases/" + name + "@" + lease_id;
  take_lease(lease, host_name() + " pid " + std::to_string(getpid()) + " owner " +
                        std::to_string(lease_owner()) + " since " + std::to_string(std::time(nullptr)) +
                        "\n");
  PathLock ex;
  try {
    {
      PathLock sh = PathLock::acquire(lock_path, /*shared=*/true, waiting);
      if (auto j = trusted_sidecar(trust_, dir_, area, sqsh, digest, o)) {
        touch_used(area, name);
        return {sqsh, *j, false};
      }
    }
    ex = PathLock::acquire(lock_path, /*shared=*/false, waiting);
    if (auto j = trusted_sidecar(trust_, dir_, area, sqsh, digest, o)) {
      touch_used(area, name);
      return {sqsh, *j, false};
    }
    // Under the exclusive lock, partial files are those of killed builders.
    remove_partials(area, name);
    for (const std::string& p : {sqsh, sidecar_path(sqsh), reuse_index_path(sqsh)})
      if (::unlink(p.c_str()) != 0 && errno != ENOENT) {
        log << "trainimg: pyxis cache: " << p << " is not trusted (not owned by " << trust_.describe()
            << ", or its sidecar does not vouch for " << digest
            << ") and cannot be replaced: " << std::strerror(errno) << "; importing a private copy\n";
        ex.release();
        (void)::unlink(lease.c_str());
        return {};
      }
    log << "trainimg: pyxis cache: importing " << o.source << " (" << digest << ") into " << sqsh << "\n"
        << std::flush;
    o.output = sqsh;
    o.force = true;
    o.content_digest = true;
    if (o.reuse.empty()) {
      o.reuse = reuse_candidates(o.source, area);
      if (!o.reuse.empty())
        log << "trainimg: pyxis cache: may reuse the blocks of " << o.reuse.front() << "\n";
    }
    ImportResult r = import_image(o);
    for (const std::string& n : r.notes) log << "trainimg: pyxis cache: note: " << n << "\n";
    for (const std::string& p : {sqsh, sidecar_path(sqsh), reuse_index_path(sqsh)})
      if (::chmod(p.c_str(), 0444) != 0 && !(errno == ENOENT && p == reuse_index_path(sqsh)))
        throw_errno(p, "chmod");
    touch_used(area, name);
    log << "trainimg: pyxis cache: published " << sqsh << "\n" << std::flush;
    return {sqsh, r.sidecar, true};
  } catch (...) {
    (void)::unlink(lease.c_str());
    if (ex.held()) {  // a failed build leaves nothing named after the digest
      remove_partials(area, name);
      ex.remove();
    }
    throw;
  }
}

void PyxisCache::release(const std::string& step, const std::string& node) const {
  const std::string host = host_name();
  std::vector<std::string> areas{dir_};
  const std::string own = dir_ + "/user-" + std::to_string(::geteuid());
  struct stat st {};
  if (::lstat(own.c_str(), &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == ::geteuid()) areas.push_back(own);
  for (const auto& area : areas)
    for (const auto& f : names_in(area + "/leases")) {
      // NAME@NODE.STEP, where STEP is UID.JOB.STEP
      auto at = f.find('@');
      if (at == std::string::npos || f.size() <= at + 1 + step.size() + 1 || !f.ends_with("." + step))
        continue;
      std::string lease_node = f.substr(at + 1, f.size() - at - 1 - step.size() - 1);
      std::string p = area + "/leases/" + f;
      if (::lstat(p.c_str(), &st) != 0 || st.st_uid != ::geteuid()) continue;  // not the caller's lease
      bool mine = lease_node == node;
      if (!mine) {  // taken under SLURMD_NODENAME, released without it: the lease names the host
        UniqueFd fd(::open(p.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
        char buf[300] = {};
        ssize_t n = fd ? ::read(fd.get(), buf, sizeof buf - 1) : -1;
        std::string text(buf, n > 0 ? static_cast<size_t>(n) : 0);
        mine = text.starts_with(host + " ");
      }
      if (mine && ::unlink(p.c_str()) != 0 && errno != ENOENT) throw_errno(p, "cannot remove the lease");
    }
}

namespace {

std::vector<std::string> readable_areas(const std::string& dir) {
  std::vector<std::string> areas{dir};
  for (const auto& a : user_areas(dir))
    if (::access(a.c_str(), R_OK | X_OK) == 0) areas.push_back(a);
  return areas;
}

}  // namespace

// "docker://u@reg#org/img:tag", "…@sha256:…" -> "docker://u@reg#org/img".
static std::string repository_of(std::string uri) {
  if (auto at = uri.rfind('@'); at != std::string::npos && uri.compare(at + 1, 7, "sha256:") == 0)
    uri.resize(at);
  size_t slash = uri.find_last_of("/#");
  if (auto colon = uri.rfind(':');
      colon != std::string::npos && (slash == std::string::npos || colon > slash))
    uri.resize(colon);
  return uri;
}

std::vector<std::string> PyxisCache::reuse_candidates(const std::string& source,
                                                      const std::string& area) const {
  constexpr size_t kMax = 3;  // each costs reading its index
  const std::string repo = repository_of(source);
  std::vector<std::string> out;
  auto items = list();
  for (auto it = items.rbegin(); it != items.rend() && out.size() < kMax; ++it) {  // most recently used first
    if (!it->trusted || (it->area != dir_ && it->area != area)) continue;
    const std::string sqsh = it->area + "/" + it->name + ".sqsh";
    UniqueFd fd(::open(sidecar_path(sqsh).c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
    if (!fd) continue;
    try {
      if (repository_of(read_sidecar(fd.get()).value("source", "")) == repo) out.push_back(sqsh);
    } catch (const std::exception&) {  // damaged: not a candidate
    }
  }
  return out;
}

std::vector<SharedCacheItem> PyxisCache::list() const {
  std::vector<SharedCacheItem> out;
  for (const auto& area : readable_areas(dir_)) {
    const auto leases = names_in(area + "/leases");
    const auto used = names_in(area + "/used");
    for (const auto& f : names_in(area)) {
      if (!f.starts_with("sha256-") || !f.ends_with(".sqsh") || f.size() < 7 + 64 + 5) continue;
      SharedCacheItem it;
      it.area = area;
      it.name = f.substr(0, f.size() - 5);
      it.digest = "sha256:" + f.substr(7, 64);
      if (!is_sha256_digest(it.digest)) continue;
      const std::string sqsh = area + "/" + f;
      struct stat st {};
      if (::lstat(sqsh.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) continue;
      const uint64_t image_bytes = static_cast<uint64_t>(st.st_size);
      const bool owner_trusted = !(st.st_mode & 022) && owner_ok(trust_, dir_, area, st.st_uid);
      it.owner = st.st_uid;
      it.bytes = image_bytes;
      it.last_used = static_cast<int64_t>(st.st_mtime);
      if (::lstat(sidecar_path(sqsh).c_str(), &st) == 0) it.bytes += static_cast<uint64_t>(st.st_size);
      if (::lstat(reuse_index_path(sqsh).c_str(), &st) == 0) it.bytes += static_cast<uint64_t>(st.st_size);
      for (const auto& u : used)
        if (u.starts_with(it.name + ".") && ::stat((area + "/used/" + u).c_str(), &st) == 0)
          it.last_used = std::max<int64_t>(it.last_used, st.st_mtime);
      for (const auto& l : leases)
        if (l.starts_with(it.name + "@") && is_live_lease(area + "/leases/" + l)) it.leases++;
      UniqueFd fd(::open(sidecar_path(sqsh).c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
      if (fd && owner_trusted && fstat(fd.get(), &st) == 0 && st.st_uid == it.owner && !(st.st_mode & 022)) {
        try {
          Json j = read_sidecar(fd.get());
          it.trusted = j.value("image_digest", "") == it.digest &&
                       j["sizes"].value("image_bytes", uint64_t(0)) == image_bytes;
        } catch (const std::exception&) {  // damaged: listed as untrusted
        }
      }
      out.push_back(it);
    }
  }
  std::sort(out.begin(), out.end(), [](const SharedCacheItem& a, const SharedCacheItem& b) {
    return a.last_used != b.last_used ? a.last_used < b.last_used : a.area + a.name < b.area + b.name;
  });
  return out;
}

SharedPruneResult PyxisCache::prune(std::optional<uint64_t> max_size,
                                    std::optional<int64_t> older_than_s) const {
  SharedPruneResult r;
  // Stale leases first: their keeper (or node) is gone.
  for (const auto& area : readable_areas(dir_))
    for (const auto& l : names_in(area + "/leases"))
      if (remove_stale_lease(area + "/leases/" + l)) r.stale_leases++;
  auto items = list();
  uint64_t total = 0;
  for (const auto& it : items) total += it.bytes;
  const int64_t now = static_cast<int64_t>(std::time(nullptr));
  for (const auto& it : items) {
    bool old = older_than_s && now - it.last_used > *older_than_s;
    bool over = max_size && total > *max_size;
    bool removed = false;
    if (old || over) {
      PathLock lock = PathLock::try_acquire(it.area + "/locks/" + it.name + ".lock", false);
      unsigned live = 0;
      if (lock.held())
        for (const auto& l : names_in(it.area + "/leases"))
          if (l.starts_with(it.name + "@") && is_live_lease(it.area + "/leases/" + l)) live++;
      if (!lock.held()) {
        r.busy++;
      } else if (live) {
        r.leased++;
      } else if (::unlink((it.area + "/" + it.name + ".sqsh").c_str()) == 0) {
        (void)::unlink(sidecar_path(it.area + "/" + it.name + ".sqsh").c_str());
        (void)::unlink(reuse_index_path(it.area + "/" + it.name + ".sqsh").c_str());
        for (const auto& u : names_in(it.area + "/used"))
          if (u.starts_with(it.name + ".")) (void)::unlink((it.area + "/used/" + u).c_str());
        lock.remove();
        removed = true;
      }
    }
    if (removed) {
      r.removed++;
      r.removed_bytes += it.bytes;
      total -= it.bytes;
    } else {
      r.kept++;
      r.kept_bytes += it.bytes;
    }
  }
  return r;
}

std::vector<SharedVerifyItem> PyxisCache::verify() const {
  std::vector<SharedVerifyItem> out;
  for (const auto& it : list()) {
    SharedVerifyItem v;
    v.item = it;
    const std::string sqsh = it.area + "/" + it.name + ".sqsh";
    UniqueFd fd(::open(sidecar_path(sqsh).c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
    try {
      if (fd) {
        Json j = read_sidecar(fd.get());
        if (j.contains("sqsh_sha256") && j["sqsh_sha256"].is_string()) v.recorded = j["sqsh_sha256"];
      }
    } catch (const std::exception&) {
    }
    try {
      v.actual = sha256_file(sqsh);
    } catch (const Error& e) {
      v.problem = e.what();
    }
    if (!v.problem.empty()) {
    } else if (!it.trusted) {
      v.problem = "not trusted (its owner, uid " + std::to_string(it.owner) +
                  ", is not trusted here, or its sidecar does not vouch for it): jobs do not use it";
    } else if (v.recorded.empty()) {
      v.problem = "its sidecar records no content digest (made by an older trainimg): cannot tell";
    } else if (v.recorded != v.actual) {
      v.problem = "content changed since it was written: " + v.actual + ", the sidecar says " + v.recorded;
    }
    out.push_back(std::move(v));
  }
  return out;
}

}  // namespace trainimg::builder
