// SPDX-License-Identifier: GPL-3.0-or-later
#include "builder/import/merge.h"

#include <gtest/gtest.h>

#include <vector>

#include "common/error.h"

namespace trainimg::builder {
namespace {

using inspect::Entry;
using inspect::EntryType;

Entry ent(const std::string& path, EntryType t = EntryType::File, uint32_t mode = 0644) {
  Entry e;
  e.path = path;
  e.type = t;
  e.mode = mode;
  return e;
}
Entry dir(const std::string& path, uint32_t mode = 0755) {
  return ent(path, EntryType::Dir, mode);
}
Entry link(const std::string& path, const std::string& target) {
  Entry e = ent(path, EntryType::Hardlink);
  e.link_target = target;
  return e;
}

// Feeds layers of entries in walk order, numbering them as a walk would.
struct Walk {
  LayerMerger m;
  uint64_t seq = 0;
  size_t layer = 0;
  void layer_of(const std::vector<Entry>& es) {
    m.begin_layer(layer, "layer" + std::to_string(layer));
    ++layer;
    for (const auto& e : es) m.apply(e, seq++);
  }
  /// Whether the bytes of walk position `seq` are the content of some path.
  bool final_content(uint64_t seq) const {
    for (const auto& [p, n] : m.view())
      if ((n.entry.type == EntryType::File || n.entry.type == EntryType::Hardlink) && n.content_seq == seq)
        return true;
    return false;
  }
  std::vector<std::string> paths() const {
    std::vector<std::string> out;
    for (const auto& [p, n] : m.view()) out.push_back(p);
    return out;
  }
};

using Paths = std::vector<std::string>;

TEST(LayerMerger, LaterFileWinsAndTheEarlierVersionIsNoContent) {
  Walk w;
  w.layer_of({dir("/etc"), ent("/etc/a")});            // seq 0, 1
  w.layer_of({ent("/etc/a", EntryType::File, 0600)});  // seq 2
  const auto& n = w.m.view().at("/etc/a");
  EXPECT_EQ(n.seq, 2u);
  EXPECT_EQ(n.entry.mode, 0600u);
  EXPECT_EQ(n.layer, 1u);
  EXPECT_FALSE(w.final_content(1));
  EXPECT_TRUE(w.final_content(2));
}

TEST(LayerMerger, WhiteoutRemovesLowerSubtreeButNotTheSameLayer) {
  Walk w;
  w.layer_of({dir("/a"), ent("/a/x"), dir("/a/d"), ent("/a/d/y"), ent("/a/dz")});
  w.layer_of({ent("/a/x2"), ent("/a/.wh.d"), ent("/a/.wh.x2")});
  EXPECT_EQ(w.paths(), (Paths{"/a", "/a/dz", "/a/x", "/a/x2"}));
  EXPECT_FALSE(w.final_content(3));  // /a/d/y's bytes are not in the final view
}

TEST(LayerMerger, OpaqueDirectoryHidesLowerChildrenWhateverTheOrderInItsLayer) {
  Walk w;
  w.layer_of({dir("/var"), dir("/var/lib"), ent("/var/lib/old"), ent("/var/keep")});
  w.layer_of({ent("/var/lib/new"), dir("/var/lib"), ent("/var/lib/.wh..wh..opq")});
  EXPECT_EQ(w.paths(), (Paths{"/var", "/var/keep", "/var/lib", "/var/lib/new"}));
}

TEST(LayerMerger, OpaqueRootKeepsTheRootItself) {
  Walk w;
  w.layer_of({dir("/"), ent("/a")});
  w.layer_of({ent("/.wh..wh..opq"), ent("/b")});
  w.m.finish();
  EXPECT_EQ(w.paths(), (Paths{"/", "/b"}));
}

TEST(LayerMerger, DirectoryOverDirectoryMergesWithNewerMetadata) {
  Walk w;
  w.layer_of({dir("/d", 0700), ent("/d/f")});
  w.layer_of({dir("/d", 0755)});
  EXPECT_EQ(w.paths(), (Paths{"/d", "/d/f"}));
  EXPECT_EQ(w.m.view().at("/d").entry.mode, 0755u);
}

TEST(LayerMerger, FileOverDirectoryDropsTheSubtreeAndDirectoryOverSymlinkReplacesIt) {
  Walk w;
  Entry lib = ent("/lib", EntryType::Symlink, 0777);
  lib.link_target = "usr/lib";
  w.layer_of({dir("/d"), ent("/d/f"), lib});
  w.layer_of({ent("/d"), dir("/lib"), ent("/lib/x")});
  EXPECT_EQ(w.paths(), (Paths{"/d", "/lib", "/lib/x"}));
  EXPECT_EQ(w.m.view().at("/d").entry.type, EntryType::File);
  EXPECT_EQ(w.m.view().at("/lib").entry.type, EntryType::Dir);
}

TEST(LayerMerger, MissingOrNonDirectoryParentsBecomeDirectories) {
  Walk w;
  Entry s = ent("/opt", EntryType::Symlink, 0777);
  s.link_target = "/elsewhere";
  w.layer_of({s});
  w.layer_of({ent("/opt/a/b")});
  w.m.finish();
  EXPECT_EQ(w.paths(), (Paths{"/", "/opt", "/opt/a", "/opt/a/b"}));
  EXPECT_EQ(w.m.view().at("/opt").entry.type, EntryType::Dir);
  EXPECT_EQ(w.m.view().at("/opt/a").entry.mode, 0755u);
}

TEST(LayerMerger, HardLinkToAFinalFileLinksToIt) {
  Walk w;
  w.layer_of({dir("/bin"), ent("/bin/a", EntryType::File, 0755), link("/bin/b", "/bin/a")});
  WritePlan plan = plan_writes(w.m.view());
  ASSERT_TRUE(plan.owner(1));
  EXPECT_EQ(*plan.owner(1), "/bin/a");
  EXPECT_EQ(plan.links, (std::map<std::string, std::string>{{"/bin/b", "/bin/a"}}));
}

TEST(LayerMerger, HardLinksKeepTheBytesOfATargetThatALaterLayerReplaced) {
  Walk w;
  Entry a = ent("/a", EntryType::File, 0750);
  a.size = 5;
  w.layer_of({a, link("/c", "/a"), link("/b", "/c")});  // seq 0, 1, 2
  w.layer_of({ent("/a")});                              // seq 3: /a replaced
  WritePlan plan = plan_writes(w.m.view());
  // /b (first in path order) now owns the bytes of seq 0; /c links to it.
  ASSERT_TRUE(plan.owner(0) && plan.owner(3));
  EXPECT_EQ(*plan.owner(0), "/b");
  EXPECT_EQ(*plan.owner(3), "/a");
  EXPECT_EQ(plan.content_owner.size(), 2u);
  EXPECT_FALSE(plan.owner(1));
  EXPECT_EQ(plan.links, (std::map<std::string, std::string>{{"/c", "/b"}}));
  const auto& b = w.m.view().at("/b");
  EXPECT_EQ(b.entry.type, EntryType::File);
  EXPECT_EQ(b.entry.mode, 0644u);  // the last link header's mode, as Docker chmods the inode
  EXPECT_EQ(b.entry.size, 5u);
}

TEST(LayerMerger, HardLinkHeaderMetadataAppliesToTheSharedInodeAsDockerDoes) {
  Walk w;
  Entry l = link("/b", "/a");
  l.mode = 0700;
  l.mtime = 7;
  w.layer_of({ent("/a", EntryType::File, 0755), l});
  EXPECT_EQ(w.m.view().at("/a").entry.mode, 0700u);
  EXPECT_EQ(w.m.view().at("/a").entry.mtime, 7);
  EXPECT_EQ(w.m.view().at("/b").source->mode, 0700u);
}

TEST(LayerMerger, HardLinkToAMissingTargetIsAnErrorNamingTheLayer) {
  Walk w;
  try {
    w.layer_of({link("/b", "/nope")});
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.diagnostic().file, "layer0");
    EXPECT_EQ(e.diagnostic().message,
              "hard link /b -> /nope: the target is not in this layer or a lower one");
  }
}

TEST(LayerMerger, HardLinkToASymlinkBecomesACopyOfTheSymlink) {
  Walk w;
  Entry s = ent("/s", EntryType::Symlink, 0777);
  s.link_target = "dangling";
  w.layer_of({s, link("/t", "/s")});
  EXPECT_EQ(w.m.view().at("/t").entry.type, EntryType::Symlink);
  EXPECT_EQ(w.m.view().at("/t").entry.link_target, "dangling");
}

TEST(LayerMerger, PutKeepsAnImageDirectoryWhenAsked) {
  Walk w;
  w.layer_of({dir("/etc", 0700), ent("/etc/hosts")});
  Entry etc = dir("/etc");
  w.m.put(etc, /*keep_dir=*/true);
  Entry hosts = ent("/etc/hosts", EntryType::File, 0755);
  w.m.put(hosts);
  EXPECT_EQ(w.m.view().at("/etc").entry.mode, 0700u);
  EXPECT_EQ(w.m.view().at("/etc/hosts").seq, kGeneratedSeq);
  EXPECT_FALSE(w.final_content(1));
}

// drop_written: the single pass's files leave the view as they are written.
struct OneStream : Walk {
  void write(const Entry& e) {
    if (layer == 0) m.begin_layer(layer++, "stream");
    m.apply(e, seq);
    if (e.type == EntryType::File) m.drop_written(e.path, seq);
    seq++;
  }
};

TEST(LayerMergerDropWritten, AWrittenFileLeavesTheViewAndKeepsItsMtime) {
  OneStream w;
  Entry f = ent("/a/f");
  f.mtime = 1234;
  w.write(dir("/a"));
  w.write(f);
  w.write(ent("/a/g"));
  EXPECT_EQ(w.paths(), (Paths{"/a"}));
  EXPECT_TRUE(w.m.was_written("/a/f"));
  EXPECT_FALSE(w.m.was_written("/a/h"));
  EXPECT_EQ(w.m.newest_written_mtime(), 1234);
  EXPECT_FALSE(w.m.written_then_replaced());
  w.write(dir("/a", 0700));  // a directory over a directory merges
  w.m.finish();
  EXPECT_FALSE(w.m.written_then_replaced());
}

TEST(LayerMergerDropWritten, ASecondEntryAtAWrittenPathIsReported) {
  OneStream w;
  w.write(ent("/f"));
  w.write(ent("/f", EntryType::File, 0600));
  EXPECT_TRUE(w.m.written_then_replaced());
}

TEST(LayerMergerDropWritten, AParentReplacedByAFileIsReported) {
  OneStream w;
  w.write(dir("/d"));
  w.write(ent("/d/f"));
  w.write(ent("/d"));  // a file replaces the directory and what is under it
  EXPECT_TRUE(w.m.written_then_replaced());
}

TEST(LayerMergerDropWritten, AWrittenFileTurnedIntoAParentIsReported) {
  OneStream w;
  w.write(ent("/x"));
  w.write(ent("/x/y"));  // /x becomes a directory over the written file
  EXPECT_TRUE(w.m.written_then_replaced());
}

TEST(LayerMergerDropWritten, APutOverAWrittenFileIsReported) {
  OneStream w;
  w.write(ent("/etc/hosts"));
  EXPECT_FALSE(w.m.written_then_replaced());
  w.m.put(ent("/etc/hosts"));
  EXPECT_TRUE(w.m.written_then_replaced());
}

TEST(LayerMergerDropWritten, AHardLinkToAWrittenFileLinksToItsPath) {
  OneStream w;
  w.write(ent("/bin/a"));  // seq 0, written and dropped
  w.write(link("/bin/b", "/bin/a"));
  w.write(link("/bin/c", "/bin/b"));  // a link to the link: the same bytes
  w.m.finish();
  EXPECT_FALSE(w.m.written_then_replaced());
  WritePlan plan = plan_writes(w.m.view());
  EXPECT_EQ(plan.links, (std::map<std::string, std::string>{{"/bin/b", "/bin/a"}, {"/bin/c", "/bin/a"}}));
  EXPECT_EQ(w.m.view().at("/bin/c").content_seq, 0u);
  EXPECT_TRUE(plan.content_owner.empty());
}

TEST(LayerMergerDropWritten, AHardLinkToNothingStillFails) {
  OneStream w;
  w.write(ent("/bin/a"));
  EXPECT_THROW(w.write(link("/bin/b", "/bin/zz")), Error);
}

TEST(LayerMergerDropWritten, ManyWrittenPathsAreAllFound) {
  OneStream w;
  w.write(dir("/d"));
  for (int i = 0; i < 5000; ++i) w.write(ent("/d/f" + std::to_string(i)));
  for (int i = 0; i < 5000; ++i) ASSERT_TRUE(w.m.was_written("/d/f" + std::to_string(i))) << i;
  EXPECT_FALSE(w.m.was_written("/d/f5000"));
  EXPECT_EQ(w.paths(), (Paths{"/d"}));
}

TEST(SplitPath, SplitsParentAndName) {
  EXPECT_EQ(split_path("/a/b"), (std::pair<std::string, std::string>{"/a", "b"}));
  EXPECT_EQ(split_path("/a"), (std::pair<std::string, std::string>{"/", "a"}));
}

}  // namespace
}  // namespace trainimg::builder
