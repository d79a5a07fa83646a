// SPDX-License-Identifier: GPL-3.0-or-later
// build_tree() semantics on layers given in memory (memory_source: no file
// format; the formats are tested in sources/, on the same rules).
#include "inspect/tree.h"

#include <gtest/gtest.h>

#include "inspect/testing/image_builder.h"

namespace trainimg::inspect {
namespace {

using testing::ImageSpec;
using testing::memory_source;

// Captures the file's bytes, so tests can see which copy won.
nlohmann::json read_all(const Entry&, ContentReader& r) {
  std::string s;
  char buf[4096];
  while (size_t n = r.read(buf, sizeof buf)) s.append(buf, n);
  return s;
}

MergedTree build(const ImageSpec& img, WantFn want = [](const Entry&) { return true; }) {
  auto src = memory_source(img);
  return build_tree(*src, want, read_all);
}

TEST(NormalizePath, CollapsesDotsSlashesAndNeverLeavesRoot) {
  EXPECT_EQ(normalize_path("/a/./b/../c"), "/a/c");
  EXPECT_EQ(normalize_path("./usr//lib/"), "/usr/lib");
  EXPECT_EQ(normalize_path("../../etc/passwd"), "/etc/passwd");
  EXPECT_EQ(normalize_path(""), "/");
  EXPECT_EQ(normalize_path("/.."), "/");
  EXPECT_EQ(normalize_path("a"), "/a");
}

TEST(NormalizePath, IsNormalizedPathAgreesWithNormalizePathOnEveryShortPath) {
  // Every path of up to 6 characters over the characters that matter.
  const std::string alphabet = "/.a";
  std::vector<std::string> paths{""};
  size_t checked = 0, normal = 0;
  for (size_t len = 0; len <= 6; ++len) {
    std::vector<std::string> next;
    for (const std::string& p : paths) {
      const bool want = normalize_path(p) == p;
      EXPECT_EQ(is_normalized_path(p), want) << "'" << p << "'";
      ++checked;
      normal += want;
      for (char c : alphabet) next.push_back(p + c);
    }
    paths = std::move(next);
  }
  EXPECT_EQ(checked, 1093u);  // 3^0 + ... + 3^6
  EXPECT_GT(normal, 10u);     // "/", "/a", "/a/a", "/.a", "/a..", ...
}

TEST(TreeOnInMemoryLayers, WhiteoutDeletesLowerFileAndNamesTheLayer) {
  ImageSpec img;
  img.layer().dir("/opt").file("/opt/a", "1").file("/opt/b", "2");
  img.layer().whiteout("/opt/a");
  MergedTree t = build(img);
  EXPECT_FALSE(t.lookup("/opt/a"));
  ASSERT_TRUE(t.lookup("/opt/b"));
  EXPECT_FALSE(t.lookup("/opt/.wh.a"));
  ASSERT_EQ(t.removed().size(), 1u);
  EXPECT_EQ(t.removed()[0].path, "/opt/a");
  EXPECT_EQ(t.removed()[0].layer, "layer0");
  EXPECT_EQ(t.removed_by("/opt/a"), "layer1");
  EXPECT_EQ(t.captured.count("/opt/a"), 0u);
  EXPECT_EQ(t.captured.at("/opt/b"), "2");
}

TEST(TreeOnInMemoryLayers, WhiteoutOfDirectoryDeletesItsSubtree) {
  ImageSpec img;
  img.layer().dir("/opt/efa/lib").file("/opt/efa/lib/libfabric.so.1", "x");
  img.layer().whiteout("/opt/efa");
  MergedTree t = build(img);
  EXPECT_FALSE(t.lookup("/opt/efa"));
  EXPECT_FALSE(t.lookup("/opt/efa/lib/libfabric.so.1"));
  EXPECT_EQ(t.removed_by("/opt/efa/lib/libfabric.so.1"), "layer1");
  EXPECT_EQ(t.children("/opt"), std::vector<std::string>{});
}

TEST(TreeOnInMemoryLayers, OpaqueDirectoryHidesLowerChildrenButKeepsItsOwnWhateverTheOrder) {
  ImageSpec img;
  img.layer().dir("/etc/ld.so.conf.d").file("/etc/ld.so.conf.d/old.conf", "old");
  // The layer's own file comes before the opaque marker in the tar.
  img.layer().dir("/etc/ld.so.conf.d").file("/etc/ld.so.conf.d/new.conf", "new").opaque("/etc/ld.so.conf.d");
  MergedTree t = build(img);
  EXPECT_EQ(t.children("/etc/ld.so.conf.d"), std::vector<std::string>{"/etc/ld.so.conf.d/new.conf"});
  EXPECT_EQ(t.removed_by("/etc/ld.so.conf.d/old.conf"), "layer1");
  EXPECT_EQ(t.captured.at("/etc/ld.so.conf.d/new.conf"), "new");
}

TEST(TreeOnInMemoryLayers, WhiteoutNeverHidesAnEntryOfItsOwnLayer) {
  ImageSpec img;
  img.layer().file("/a", "lower");
  img.layer().file("/a", "same-layer").whiteout("/a");
  MergedTree t = build(img);
  ASSERT_TRUE(t.lookup("/a"));
  EXPECT_EQ(t.captured.at("/a"), "same-layer");
}

TEST(TreeOnInMemoryLayers, FileReplacingDirectoryDropsTheSubtree) {
  ImageSpec img;
  img.layer().dir("/usr/local/mpi/lib").file("/usr/local/mpi/lib/libmpi.so.40", "mpi");
  img.layer().file("/usr/local/mpi", "now a file");
  MergedTree t = build(img);
  ASSERT_TRUE(t.lookup("/usr/local/mpi"));
  EXPECT_EQ(t.lookup("/usr/local/mpi")->type, EntryType::File);
  EXPECT_FALSE(t.lookup("/usr/local/mpi/lib/libmpi.so.40"));
  EXPECT_EQ(t.removed_by("/usr/local/mpi/lib/libmpi.so.40"), "layer1");
  EXPECT_EQ(t.captured.count("/usr/local/mpi/lib/libmpi.so.40"), 0u);
}

TEST(TreeOnInMemoryLayers, DirectoryOverLowerSymlinkReplacesIt) {
  ImageSpec img;
  img.layer().dir("/usr/lib").symlink("/lib", "usr/lib");
  img.layer().dir("/lib").file("/lib/x.so", "x");
  MergedTree t = build(img);
  EXPECT_EQ(t.lookup("/lib")->type, EntryType::Dir);
  EXPECT_EQ(t.resolve("/lib/x.so"), "/lib/x.so");
}

TEST(TreeOnInMemoryLayers, LaterCopyWinsAndReplacesTheCapture) {
  ImageSpec img;
  img.layer().file("/v", "1");
  img.layer().file("/v", "2");
  MergedTree t = build(img);
  EXPECT_EQ(t.captured.at("/v"), "2");
  EXPECT_EQ(t.lookup("/v")->layer, "layer1");
  EXPECT_TRUE(t.removed().empty());
}

TEST(TreeOnInMemoryLayers, UnwantedLaterCopyDropsTheStaleCapture) {
  ImageSpec img;
  img.layer().file("/v", "1");
  img.layer().file("/v", "22");
  MergedTree t = build(img, [](const Entry& e) { return e.size == 1; });
  EXPECT_EQ(t.captured.count("/v"), 0u);
}

TEST(TreeOnInMemoryLayers, MissingParentsAreSynthesised) {
  ImageSpec img;
  img.layer().file("/a/b/c", "x");
  MergedTree t = build(img);
  ASSERT_TRUE(t.lookup("/a/b"));
  EXPECT_EQ(t.lookup("/a/b")->type, EntryType::Dir);
  EXPECT_EQ(t.children("/"), std::vector<std::string>{"/a"});
}

TEST(TreeResolve, FollowsSymlinksInsideTheImageRootOnly) {
  ImageSpec img;
  img.layer()
      .dir("/usr/local/cuda-12.4")
      .file("/usr/local/cuda-12.4/version.json", "{}")
      .symlink("/usr/local/cuda", "cuda-12.4")
      .symlink("/cuda-abs", "/usr/local/cuda")
      .symlink("/escape", "../../../../usr/local/cuda/version.json")
      .symlink("/etc-host", "/etc")
      .symlink("/loop1", "loop2")
      .symlink("/loop2", "loop1")
      .symlink("/dangling", "nowhere");
  MergedTree t = build(img);
  EXPECT_EQ(t.resolve("/usr/local/cuda/version.json"), "/usr/local/cuda-12.4/version.json");
  EXPECT_EQ(t.resolve("/cuda-abs/version.json"), "/usr/local/cuda-12.4/version.json");
  EXPECT_EQ(t.resolve("/escape"), "/usr/local/cuda-12.4/version.json");  // ".." stops at the image root
  EXPECT_EQ(t.resolve("/etc-host"), std::nullopt);                       // the host's /etc is never seen
  EXPECT_EQ(t.resolve("/loop1"), std::nullopt);
  EXPECT_EQ(t.resolve("/dangling"), std::nullopt);
  EXPECT_EQ(t.resolve("/usr/local/cuda/version.json/x"), std::nullopt);  // a file is not a directory
  EXPECT_EQ(t.resolve("/"), "/");
  EXPECT_EQ(t.resolve("/../../usr/local/cuda"), "/usr/local/cuda-12.4");
}

TEST(TreeResolve, HardLinkResolvesToItsTargetAndSharesItsCapture) {
  ImageSpec img;
  img.layer().file("/lib/libfabric.so.1.18.0", "elf").hardlink("/lib/libfabric.so.1", "/lib/libfabric.so.1.18.0");
  MergedTree t = build(img);
  EXPECT_EQ(t.lookup("/lib/libfabric.so.1")->type, EntryType::Hardlink);
  EXPECT_EQ(t.resolve("/lib/libfabric.so.1"), "/lib/libfabric.so.1.18.0");
  EXPECT_EQ(t.captured.at("/lib/libfabric.so.1"), "elf");
}

}  // namespace
}  // namespace trainimg::inspect
