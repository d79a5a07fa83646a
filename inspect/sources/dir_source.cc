// SPDX-License-Identifier: GPL-3.0-or-later
#include "inspect/sources/dir_source.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <map>
#include <utility>

#include "common/error.h"
#include "common/fd.h"

namespace trainimg::inspect {
namespace {

struct DirCloser {
  void operator()(DIR* d) const { closedir(d); }
};

class FdContentReader : public ContentReader {
 public:
  FdContentReader(int fd, std::string name) : fd_(fd), name_(std::move(name)) {}
  size_t read(char* buf, size_t n) override {
    for (;;) {
      ssize_t got = ::read(fd_, buf, n);
      if (got >= 0) return static_cast<size_t>(got);
      if (errno != EINTR) throw_errno(name_, "read");
    }
  }
  uint64_t skip(uint64_t n) override {
    off_t cur = lseek(fd_, 0, SEEK_CUR);
    struct stat st {};
    if (cur < 0 || fstat(fd_, &st) != 0) return ContentReader::skip(n);
    uint64_t left = st.st_size > cur ? static_cast<uint64_t>(st.st_size - cur) : 0;
    uint64_t step = std::min(n, left);
    if (lseek(fd_, static_cast<off_t>(step), SEEK_CUR) < 0) throw_errno(name_, "seek");
    return step;
  }

 private:
  int fd_;
  std::string name_;
};

EntryType type_of(mode_t m) {
  if (S_ISDIR(m)) return EntryType::Dir;
  if (S_ISLNK(m)) return EntryType::Symlink;
  if (S_ISFIFO(m)) return EntryType::Fifo;
  if (S_ISCHR(m)) return EntryType::CharDev;
  if (S_ISBLK(m)) return EntryType::BlockDev;
  if (S_ISSOCK(m)) return EntryType::Socket;
  return EntryType::File;
}

class DirSource : public ImageSource {
 public:
  DirSource(std::string root, UniqueFd fd) : root_(std::move(root)), fd_(std::move(fd)) {}

  ImageDescription describe() override {
    ImageDescription d;
    d.reference = "dir:" + root_;
    d.kind = "dir";
    d.layers = {"dir"};
    return d;
  }

  void walk(LayerVisitor& v) override {
    first_link_.clear();
    v.begin_layer("dir", 0);
    struct stat st {};
    if (fstat(fd_.get(), &st) != 0) throw_errno(root_, "stat");
    Entry root = make_entry("/", st);
    v.entry(root);
    UniqueFd dup(::dup(fd_.get()));
    if (!dup) throw_errno(root_, "dup");
    walk_dir(v, std::move(dup), "/");
    v.end_layer("dir", 0);
  }

 private:
  Entry make_entry(const std::string& path, const struct stat& st) {
    Entry e;
    e.path = path;
    e.type = type_of(st.st_mode);
    e.mode = st.st_mode & 07777;
    e.uid = st.st_uid;
    e.gid = st.st_gid;
    e.mtime = st.st_mtim.tv_sec;
    e.layer = "dir";
    if (e.type == EntryType::File) e.size = static_cast<uint64_t>(st.st_size);
    if (e.type == EntryType::CharDev || e.type == EntryType::BlockDev) {
      e.rdev_major = major(st.st_rdev);
      e.rdev_minor = minor(st.st_rdev);
    }
    return e;
  }

  std::string display(const std::string& path) const { return root_ + path; }

  void walk_dir(LayerVisitor& v, UniqueFd dirfd, const std::string& dir) {
    int fd = dirfd.get();
    std::unique_ptr<DIR, DirCloser> d(fdopendir(dirfd.release()));
    if (!d) throw_errno(display(dir), "opendir");
    std::vector<std::string> names;
    errno = 0;
    while (dirent* de = readdir(d.get())) {
      std::string n = de->d_name;
      if (n != "." && n != "..") names.push_back(std::move(n));
    }
    if (errno != 0) throw_errno(display(dir), "readdir");
    std::sort(names.begin(), names.end());
    for (const auto& name : names) {
      const std::string path = dir == "/" ? "/" + name : dir + "/" + name;
      struct stat st {};
      if (fstatat(fd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) throw_errno(display(path), "lstat");
      Entry e = make_entry(path, st);
      if (e.type == EntryType::Symlink) e.link_target = read_link(fd, name, path, st);
      if (e.type == EntryType::File && st.st_nlink > 1) {
        auto [it, fresh] = first_link_.try_emplace({st.st_dev, st.st_ino}, path);
        if (!fresh) {
          e.type = EntryType::Hardlink;
          e.size = 0;
          e.link_target = it->second;
        }
      }
      bool wanted = v.entry(e);
      if (e.type == EntryType::File && wanted) {
        UniqueFd f(openat(fd, name.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY | O_NONBLOCK));
        if (!f) throw_errno(display(path), "open");
        FdContentReader r(f.get(), display(path));
        v.content(e, r);
      }
      if (e.type == EntryType::Dir) {
        UniqueFd sub(openat(fd, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
        if (!sub) throw_errno(display(path), "open directory");
        walk_dir(v, std::move(sub), path);
      }
    }
  }

  std::string read_link(int dirfd, const std::string& name, const std::string& path, const struct stat& st) {
    std::string target(static_cast<size_t>(st.st_size > 0 ? st.st_size : 256) + 1, '\0');
    for (;;) {
      ssize_t n = readlinkat(dirfd, name.c_str(), target.data(), target.size());
      if (n < 0) throw_errno(display(path), "readlink");
      if (static_cast<size_t>(n) < target.size()) {
        target.resize(static_cast<size_t>(n));
        return target;
      }
      target.resize(target.size() * 2);
    }
  }

  std::string root_;
  UniqueFd fd_;
  std::map<std::pair<dev_t, ino_t>, std::string> first_link_;
};

}  // namespace

std::unique_ptr<ImageSource> open_dir_source(const std::string& root) {
  UniqueFd fd(open(root.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!fd) throw_errno(root, "cannot open image directory");
  std::string clean = root;
  while (clean.size() > 1 && clean.back() == '/') clean.pop_back();
  return std::make_unique<DirSource>(clean == "/" ? "" : clean, std::move(fd));
}

}  // namespace trainimg::inspect
