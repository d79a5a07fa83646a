// SPDX-License-Identifier: GPL-3.0-or-later
#include "builder/import/fixup.h"

#include <gtest/gtest.h>

namespace trainimg::builder {
namespace {

using inspect::Entry;
using inspect::EntryType;

Entry ent(const std::string& path, EntryType t, uint32_t mode) {
  Entry e;
  e.path = path;
  e.type = t;
  e.mode = mode;
  return e;
}

TEST(EnrootFixup, ExcludesDevContentsDockerenvAndSockets) {
  EXPECT_FALSE(enroot_excludes(ent("/dev", EntryType::Dir, 0755)));
  EXPECT_TRUE(enroot_excludes(ent("/dev/null", EntryType::CharDev, 0666)));
  EXPECT_TRUE(enroot_excludes(ent("/dev/shm", EntryType::Dir, 01777)));
  EXPECT_TRUE(enroot_excludes(ent("/.dockerenv", EntryType::File, 0755)));
  EXPECT_TRUE(enroot_excludes(ent("/run/s.sock", EntryType::Socket, 0755)));
  EXPECT_FALSE(enroot_excludes(ent("/device", EntryType::File, 0644)));
  EXPECT_FALSE(enroot_excludes(ent("/etc/.dockerenv", EntryType::File, 0644)));
}

TEST(EnrootFixup, ModeFixupIsChmodUPlusCapitalXAndUPlusWOnDirectories) {
  EXPECT_EQ(enroot_fix_mode(EntryType::File, 0000, 2), 0400u);    // u+r
  EXPECT_EQ(enroot_fix_mode(EntryType::File, 0001, 2), 0501u);    // X: some x bit
  EXPECT_EQ(enroot_fix_mode(EntryType::File, 04011, 2), 04511u);  // setuid kept
  EXPECT_EQ(enroot_fix_mode(EntryType::File, 0444, 2), 0444u);    // no u+w on files
  EXPECT_EQ(enroot_fix_mode(EntryType::Dir, 0000, 1), 0700u);     // u+rwx
  EXPECT_EQ(enroot_fix_mode(EntryType::Dir, 01555, 15), 01755u);  // depth 15: u+w
  EXPECT_EQ(enroot_fix_mode(EntryType::Dir, 0555, 16), 0555u);    // beyond find -maxdepth 15
  EXPECT_EQ(enroot_fix_mode(EntryType::Symlink, 0777, 1), 0777u);
  EXPECT_EQ(enroot_fix_mode(EntryType::Symlink, 0644, 1), 0777u);  // extracted on Linux: always 0777
  EXPECT_EQ(enroot_fix_mode(EntryType::Fifo, 0020, 1), 0420u);
}

TEST(EnrootFixup, DepthCountsComponents) {
  EXPECT_EQ(path_depth("/"), 0u);
  EXPECT_EQ(path_depth("/a"), 1u);
  EXPECT_EQ(path_depth("/a/b/c"), 3u);
}

TEST(EnrootFixup, OwnershipIsRootAndXattrsDropUnlessKept) {
  Entry e = ent("/usr/bin/ping", EntryType::File, 0755);
  e.uid = 1000;
  e.gid = 27;
  e.xattrs["security.capability"] = std::string("\x01\x00\x00\x02", 4);
  Entry kept = e;
  enroot_fixup(e, {});
  EXPECT_EQ(e.uid, 0u);
  EXPECT_EQ(e.gid, 0u);
  EXPECT_TRUE(e.xattrs.empty());
  enroot_fixup(kept, {.keep_xattrs = true});
  EXPECT_EQ(kept.xattrs.size(), 1u);
}

TEST(EnrootFixup, DockerInitLayerMatchesDockerExport) {
  auto init = docker_init_layer(42);
  std::vector<std::string> paths;
  for (const auto& e : init) {
    paths.push_back(e.path);
    EXPECT_EQ(e.mtime, 42);
    EXPECT_FALSE(enroot_excludes(e)) << e.path;
  }
  EXPECT_EQ(paths, (std::vector<std::string>{"/dev", "/etc", "/proc", "/sys", "/etc/hostname", "/etc/hosts",
                                             "/etc/resolv.conf", "/etc/mtab"}));
  EXPECT_EQ(init[5].mode, 0755u);
  EXPECT_EQ(init[5].size, 0u);
  EXPECT_EQ(init[7].link_target, "/proc/mounts");
}

TEST(EnrootFixup, DockerCreateWritesTheInitFilesEtcAndDevButNotProcOrSys) {
  for (const char* p : {"/.dockerenv", "/dev", "/dev/pts", "/dev/console", "/etc", "/etc/hostname",
                        "/etc/hosts", "/etc/resolv.conf", "/etc/mtab"})
    EXPECT_TRUE(docker_create_writes(p)) << p;
  // The image's own, when it has them (a missing one is left to the clamp).
  for (const char* p : {"/proc", "/sys", "/", "/etc/passwd", "/etc/hosts.allow", "/device", "/devx/a", "/w"})
    EXPECT_FALSE(docker_create_writes(p)) << p;
}

}  // namespace
}  // namespace trainimg::builder
