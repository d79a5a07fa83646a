// SPDX-License-Identifier: GPL-3.0-or-later
#include "builder/import/fixup.h"

namespace trainimg::builder {

using inspect::Entry;
using inspect::EntryType;

bool enroot_excludes(const Entry& e) {
  return enroot_excludes(e.type, e.path);
}

bool enroot_excludes(EntryType type, const std::string& path) {
  if (type == EntryType::Socket) return true;
  return path == "/.dockerenv" || path.rfind("/dev/", 0) == 0;
}

size_t path_depth(const std::string& path) {
  size_t n = 0;
  for (size_t i = 0; i + 1 < path.size(); ++i)
    if (path[i] == '/') ++n;
  return path == "/" ? 0 : n;
}

uint32_t enroot_fix_mode(EntryType type, uint32_t mode, size_t depth) {
  // A symlink extracted on Linux is 0777 whatever its tar header says (no
  // lchmod): what enroot's mksquashfs reads.
  if (type == EntryType::Symlink) return (mode & ~07777u) | 0777u;
  if (type == EntryType::Hardlink) return mode;
  constexpr uint32_t kUr = 0400, kUw = 0200, kUx = 0100, kAnyX = 0111;
  mode |= kUr;
  if (type == EntryType::Dir || (mode & kAnyX) != 0) mode |= kUx;
  if (type == EntryType::Dir && depth <= 15) mode |= kUw;
  return mode;
}

void enroot_fixup(Entry& e, const FixupOptions& opt) {
  e.uid = 0;
  e.gid = 0;
  e.mode = enroot_fix_mode(e.type, e.mode, path_depth(e.path));
  if (!opt.keep_xattrs) e.xattrs.clear();
}

bool docker_create_writes(const std::string& path) {
  for (const char* p :
       {"/.dockerenv", "/dev", "/etc", "/etc/hostname", "/etc/hosts", "/etc/resolv.conf", "/etc/mtab"})
    if (path == p) return true;
  return path.starts_with("/dev/");
}

Entry make_dir(const std::string& path, int64_t mtime) {
  Entry e;
  e.path = path;
  e.type = EntryType::Dir;
  e.mode = 0755;
  e.mtime = mtime;
  e.layer = "trainimg";
  return e;
}

Entry make_file(const std::string& path, uint32_t mode, uint64_t size, int64_t mtime) {
  Entry e;
  e.path = path;
  e.type = EntryType::File;
  e.mode = mode;
  e.size = size;
  e.mtime = mtime;
  e.layer = "trainimg";
  return e;
}

std::vector<Entry> docker_init_layer(int64_t mtime) {
  std::vector<Entry> out;
  for (const char* d : {"/dev", "/etc", "/proc", "/sys"}) out.push_back(make_dir(d, mtime));
  // os.OpenFile(path, O_CREATE, 0755) in Docker's initlayer: empty, 0755.
  for (const char* f : {"/etc/hostname", "/etc/hosts", "/etc/resolv.conf"})
    out.push_back(make_file(f, 0755, 0, mtime));
  Entry mtab;
  mtab.path = "/etc/mtab";
  mtab.type = EntryType::Symlink;
  mtab.mode = 0777;
  mtab.link_target = "/proc/mounts";
  mtab.mtime = mtime;
  mtab.layer = "trainimg";
  out.push_back(mtab);
  for (auto& e : out) e.layer = "docker-init";
  return out;
}

}  // namespace trainimg::builder
