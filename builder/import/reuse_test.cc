// SPDX-License-Identifier: GPL-3.0-or-later
// Block reuse (issue 26): an import that copies the blocks of an earlier
// image must give the image a cold import gives, as sqfsdiff (squashfs-tools-
// ng) and `unsquashfs -lln` see it; an earlier image that cannot lend is
// refused with a note and the import goes on cold.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <random>
#include <set>
#include <sstream>

#include "builder/import/import.h"
#include "builder/import/reuse_index.h"
#include "inspect/testing/image_builder.h"
#include "sqsh/test_support.h"

namespace trainimg::builder {
namespace {

namespace fs = std::filesystem;
using inspect::testing::ImageSpec;
using inspect::testing::LayerSpec;
using inspect::testing::TempDir;

// A shell command's status and its stdout and stderr together.
sqsh::testing::RunResult sh(const std::string& cmd) {
  return sqsh::testing::run("set -e; " + cmd);
}

// Bytes that do not compress away: a file of several 128 KiB blocks must
// keep several blocks.
std::string noise(size_t n, uint32_t seed) {
  std::string s(n, '\0');
  for (char& c : s) {
    seed = seed * 1664525u + 1013904223u;
    c = static_cast<char>(seed >> 24);
  }
  return s;
}

// Three lower layers shared by both images: a base with big and small
// files, hard links, a directory a later layer empties; a middle layer; and
// a third only the old image has, whose changes hide bytes of the shared
// layers from the old image.
void shared_layers(ImageSpec& img) {
  img.layer()
      .dir("/usr")
      .dir("/usr/lib")
      .file("/usr/lib/libbig.so", noise(700 * 1024, 1), 0755)  // 5 full blocks and a tail
      .file("/usr/lib/libexact.so", noise(256 * 1024, 2))      // whole blocks, no tail
      .file("/usr/lib/small.py", "print('hello')\n")
      .file("/usr/lib/empty", "")
      .hardlink("/usr/lib/libbig-link.so", "/usr/lib/libbig.so")
      .dir("/etc")
      .file("/etc/passwd", "root:x:0:0::/root:/bin/sh\n")
      .file("/etc/deleted-later", "bye\n")
      .symlink("/etc/alias", "passwd")
      .dir("/opt")
      .dir("/opt/app")
      .file("/opt/app/lower", "from the base\n")
      .file("/opt/app/lower-big", noise(300 * 1024, 3));
  img.layer()
      .dir("/srv")
      .file("/srv/config", "middle\n")
      .file("/srv/hidden-in-old", noise(200 * 1024, 4))  // the old image's third layer deletes it
      .file("/srv/changed-in-old", "middle version\n");
}

ImageSpec old_image() {
  ImageSpec img;
  img.tag = "trainimg-reuse-old:1";
  shared_layers(img);
  img.layer()
      .dir("/srv")
      .whiteout("/srv/hidden-in-old")
      .file("/srv/changed-in-old", "old top\n")
      .file("/old-only", "only in the old image\n");
  return img;
}

// The rebuilt image: the two lower layers, then a new top layer with a
// whiteout, an opaque directory, a new file over one name of a lower
// layer's hard-linked pair (the other keeps the lent bytes), a file changed
// and new files, hard-linked too.
ImageSpec new_image() {
  ImageSpec img;
  img.tag = "trainimg-reuse-new:1";
  shared_layers(img);
  img.layer()
      .dir("/etc")
      .whiteout("/etc/deleted-later")
      .file("/etc/passwd", "root:x:0:0::/root:/bin/bash\n")  // changed
      .dir("/opt")
      .opaque("/opt/app")
      .file("/opt/app/new", "from the top\n")
      .dir("/usr")
      .dir("/usr/lib")
      .file("/usr/lib/libbig-link.so", "a new file where a second name of libbig was\n")
      .file("/usr/lib/libnew.so", noise(400 * 1024, 5))
      .hardlink("/usr/lib/libnew-link.so", "/usr/lib/libnew.so");
  return img;
}

ImportOptions options(const std::string& source, const std::string& out) {
  ImportOptions o;
  o.source = source;
  o.output = out;
  o.source_date_epoch = 1700000000;
  o.inspect = false;
  o.block_size = 128 * 1024;
  o.jobs = 2;
  return o;
}

// sqfsdiff compares the trees, every inode's metadata and every file's bytes.
void expect_same_image(const std::string& cold, const std::string& warm) {
  auto d = sh("sqfsdiff --old " + cold + " --new " + warm);
  EXPECT_EQ(d.status, 0) << d.output;
  auto a = sh("unsquashfs -lln " + cold + " | sed 's/^[^ ]* //'");
  auto b = sh("unsquashfs -lln " + warm + " | sed 's/^[^ ]* //'");
  EXPECT_GT(a.output.size(), 200u);
  EXPECT_EQ(a.output, b.output);
}

TEST(ImportReuse, CopiedBlocksGiveTheColdImageAcrossWhiteoutsOpaqueDirsHardLinksChangesAndDeletes) {
  TempDir tmp;
  inspect::testing::write_docker_archive(old_image(), tmp / "old.tar");
  inspect::testing::write_docker_archive(new_image(), tmp / "new.tar");
  ImportResult old = import_image(options("docker-archive:" + tmp / "old.tar", tmp / "old.sqsh"));
  EXPECT_TRUE(old.notes.empty()) << old.notes.front();
  ASSERT_TRUE(fs::exists(tmp / "old.sqsh.index"));
  EXPECT_EQ(old.sidecar["reuse_index"], tmp / "old.sqsh.index");

  ImportResult cold = import_image(options("docker-archive:" + tmp / "new.tar", tmp / "cold.sqsh"));
  ImportOptions o = options("docker-archive:" + tmp / "new.tar", tmp / "warm.sqsh");
  o.reuse = {tmp / "old.sqsh"};
  std::ostringstream events;
  ImportResult warm = import_image(o, import_progress_printer("json", events, false));
  EXPECT_TRUE(warm.notes.empty()) << warm.notes.front();
  expect_same_image(tmp / "cold.sqsh", tmp / "warm.sqsh");

  const auto& reuse = warm.sidecar["reuse"];
  EXPECT_EQ(reuse["from"], tmp / "old.sqsh") << reuse.dump();
  EXPECT_EQ(reuse["shared_layers"], 2) << reuse.dump();
  // /srv/hidden-in-old's bytes are not in the old image: the middle layer
  // is read after all; the base layer is not.
  EXPECT_EQ(reuse["layers_not_read"], 1) << reuse.dump();
  // Lent: libbig (its other name is a new file now), libexact, small.py and
  // /srv/config. Not: passwd (changed on top), lower and lower-big (emptied
  // away), hidden-in-old and the middle layer's changed-in-old (the old
  // image holds other bytes there), empty (no bytes).
  EXPECT_EQ(reuse["files"], 4) << reuse.dump();
  EXPECT_GT(reuse["copied_bytes"].get<uint64_t>(), 700u * 1024) << reuse.dump();
  // Copied during the merge, before it was known that the opaque /opt/app
  // hides it: lower-big's two whole blocks of noise, used by no file.
  EXPECT_GE(reuse["unused_bytes"].get<uint64_t>(), 2u * 128 * 1024) << reuse.dump();
  bool reported = false;
  std::istringstream lines(events.str());
  for (std::string line; std::getline(lines, line);) {
    auto j = nlohmann::json::parse(line);
    if (j["phase"] == "reuse") reported = j["reuse"]["files"] == 4;
  }
  EXPECT_TRUE(reported) << events.str();
  EXPECT_EQ(warm.info.inode_count, cold.info.inode_count);
  // The lent blocks are copied while the new layer compresses, so they lie
  // ahead of its blocks, in layer order as in the cold image.
  auto blocks_start = [](const std::string& image, const std::string& path) {
    auto s = sh("rdsquashfs -s " + path + " " + image + " | sed -n 's/^Blocks start: //p'");
    EXPECT_EQ(s.status, 0) << s.output;
    return std::stoull(s.output);
  };
  for (const std::string& image : {tmp / "cold.sqsh", tmp / "warm.sqsh"})
    EXPECT_LT(blocks_start(image, "/usr/lib/libexact.so"), blocks_start(image, "/usr/lib/libnew.so"))
        << image;

  // A source that cannot read a layer on its own (a gzip-compressed
  // archive) is walked once per pass: the shared layers are replayed when
  // the walk reaches the first layer it reads, and the lent blocks are
  // copied before the data walk.
  ASSERT_EQ(sh("gzip -kn " + tmp / "new.tar").status, 0);
  ImportOptions gz = options("docker-archive:" + tmp / "new.tar.gz", tmp / "gz.sqsh");
  gz.reuse = {tmp / "old.sqsh"};
  ImportResult rg = import_image(gz);
  EXPECT_TRUE(rg.notes.empty()) << rg.notes.front();
  EXPECT_EQ(rg.sidecar["reuse"]["files"], 4) << rg.sidecar["reuse"].dump();
  expect_same_image(tmp / "cold.sqsh", tmp / "gz.sqsh");

  // The reused image lends in turn: its own index names every block anew.
  ImportOptions again = options("docker-archive:" + tmp / "new.tar", tmp / "again.sqsh");
  again.reuse = {tmp / "warm.sqsh"};
  ImportResult r3 = import_image(again);
  EXPECT_TRUE(r3.notes.empty()) << r3.notes.front();
  EXPECT_EQ(r3.sidecar["reuse"]["shared_layers"], 3) << r3.sidecar["reuse"].dump();
  EXPECT_EQ(r3.sidecar["reuse"]["layers_not_read"], 3) << r3.sidecar["reuse"].dump();
  expect_same_image(tmp / "cold.sqsh", tmp / "again.sqsh");
}

TEST(ImportReuse, AnOldImageThatCannotLendIsNamedInANoteAndTheImportGoesOnCold) {
  TempDir tmp;
  inspect::testing::write_docker_archive(old_image(), tmp / "old.tar");
  inspect::testing::write_docker_archive(new_image(), tmp / "new.tar");
  import_image(options("docker-archive:" + tmp / "old.tar", tmp / "old.sqsh"));
  import_image(options("docker-archive:" + tmp / "new.tar", tmp / "cold.sqsh"));
  const std::string old = tmp / "old.sqsh";

  struct Case {
    const char* name;
    std::string prepare;  // shell, on a copy at $C
    const char* note;
  };
  const std::vector<Case> cases = {
      {"no index (not made by trainimg import)", "rm $C.index", "no reuse index next to the image"},
      {"a flipped byte in the index", "printf '\\377' | dd of=$C.index bs=1 seek=40 conv=notrunc status=none",
       "its digest does not match"},
      {"a truncated index", "truncate -s 100 $C.index", "truncated"},
      {"an index of an earlier format",
       "printf 'TIMGIDX1' | dd of=$C.index bs=1 seek=0 conv=notrunc status=none", "(format 1)"},
      {"the index of another image", "cp " + (tmp / "cold.sqsh.index") + " $C.index",
       "the index is for another image"},
      {"a damaged image", "printf 'XXXX' | dd of=$C bs=1 seek=0 conv=notrunc status=none", "not reusing"},
      {"mksquashfs output",
       "rm -rf $C.d && mkdir $C.d && echo x > $C.d/f && rm $C && mksquashfs $C.d $C -quiet -no-progress "
       "-b 131072 -comp zstd >/dev/null && cp " +
           old + ".index $C.index",
       "the index is for another image"},
  };
  int i = 0;
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const std::string copy = tmp / ("c" + std::to_string(i) + ".sqsh");
    const std::string out = tmp / ("out" + std::to_string(i++) + ".sqsh");
    ASSERT_EQ(sh("cp " + old + " " + copy + " && cp " + old + ".index " + copy + ".index && C=" + copy +
                 " && " + c.prepare)
                  .status,
              0);
    ImportOptions o = options("docker-archive:" + tmp / "new.tar", out);
    o.reuse = {copy};
    ImportResult r = import_image(o);
    ASSERT_EQ(r.notes.size(), 1u);
    EXPECT_NE(r.notes[0].find(c.note), std::string::npos) << r.notes[0];
    EXPECT_NE(r.notes[0].find(copy), std::string::npos) << r.notes[0];
    EXPECT_TRUE(r.sidecar["reuse"]["from"].is_null()) << r.sidecar["reuse"].dump();
    expect_same_image(tmp / "cold.sqsh", out);
  }

  // Another compressor or block size: its blocks could not be read back.
  ImportOptions o = options("docker-archive:" + tmp / "new.tar", tmp / "gzip.sqsh");
  o.compressor = sqsh::Compressor::Gzip;
  o.reuse = {old};
  ImportResult r = import_image(o);
  ASSERT_EQ(r.notes.size(), 1u);
  EXPECT_NE(r.notes[0].find("it is zstd, 128 KiB blocks; this import writes gzip"), std::string::npos)
      << r.notes[0];
}

TEST(ImportReuse, ForcedReimportWithoutAnIndexRemovesTheStaleOne) {
  TempDir tmp;
  inspect::testing::write_docker_archive(old_image(), tmp / "old.tar");
  import_image(options("docker-archive:" + tmp / "old.tar", tmp / "x.sqsh"));
  ASSERT_TRUE(fs::exists(tmp / "x.sqsh.index"));
  ImportOptions o = options("docker-archive:" + tmp / "old.tar", tmp / "x.sqsh");
  o.force = true;
  o.write_index = false;
  ImportResult r = import_image(o);
  EXPECT_FALSE(fs::exists(tmp / "x.sqsh.index"));
  EXPECT_TRUE(r.sidecar["reuse_index"].is_null());
}

// The fuzz harness (tests/fuzz/fuzz_reuse_index.cc) frames its input with
// frame_reuse_index: an index an import wrote is exactly its sections framed.
TEST(ImportReuse, AnIndexFileIsItsSectionsFramedAsTheFuzzHarnessFramesThem) {
  TempDir tmp;
  inspect::testing::write_docker_archive(old_image(), tmp / "old.tar");
  import_image(options("docker-archive:" + tmp / "old.tar", tmp / "x.sqsh"));
  std::ifstream in(tmp / "x.sqsh.index", std::ios::binary);
  std::string file((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const size_t magic = 8, trailer = 4 + 71 + 8;  // "sha256:" + 64 hex as a string, the end mark
  ASSERT_GT(file.size(), magic + trailer);
  std::string sections = file.substr(magic, file.size() - magic - trailer);
  EXPECT_EQ(builder::frame_reuse_index(sections), file);
  sections[0] ^= 1;  // another body, another digest
  EXPECT_NE(builder::frame_reuse_index(sections).substr(file.size() - trailer),
            file.substr(file.size() - trailer));
}

// docker:// from the real registry of .ci/start-registry.sh: the shared
// layers' blobs are never downloaded, not even into the blob cache.
TEST(ImportReuse, FromARegistryOnlyTheNewLayersAreFetched) {
  const char* tmpdir = std::getenv("TMPDIR");
  std::string state = std::getenv("TRAINIMG_REGISTRY_STATE")
                          ? std::getenv("TRAINIMG_REGISTRY_STATE")
                          : std::string(tmpdir ? tmpdir : "/tmp") + "/trainimg-registry";
  if (!fs::exists(state + "/env") ||
      sh("curl -s -o /dev/null --max-time 2 http://127.0.0.1:5500/v2/").status != 0) {
    if (std::getenv("TRAINIMG_CI")) FAIL() << "the test registry is not running (.ci/start-registry.sh)";
    GTEST_SKIP() << "no test registry (run .ci/start-registry.sh)";
  }
  TempDir tmp, cache_old, cache_new;
  ImageSpec oldi = old_image(), newi = new_image();
  // The rebuilt image shares the old one's two lowest layers.
  inspect::testing::write_oci_layout(oldi, tmp / "oci-old");
  inspect::testing::write_oci_layout(newi, tmp / "oci-new");
  ASSERT_EQ(sh("skopeo copy --quiet --dest-tls-verify=false oci:" + tmp / "oci-old" +
               ":1 docker://127.0.0.1:5500/test/reuse:old >/dev/null && skopeo copy --quiet "
               "--dest-tls-verify=false oci:" +
               tmp / "oci-new" + ":1 docker://127.0.0.1:5500/test/reuse:new >/dev/null")
                .status,
            0);
  ::setenv("TRAINIMG_ALLOW_HTTP", "1", 1);
  ::setenv("TRAINIMG_CACHE", cache_old.path().c_str(), 1);
  import_image(options("docker://127.0.0.1:5500#test/reuse:old", tmp / "old.sqsh"));
  ::setenv("TRAINIMG_CACHE", cache_new.path().c_str(), 1);
  ImportOptions o = options("docker://127.0.0.1:5500#test/reuse:new", tmp / "warm.sqsh");
  o.reuse = {tmp / "old.sqsh"};
  std::ostringstream events;
  ImportResult warm = import_image(o, import_progress_printer("json", events, false));
  o.reuse.clear();
  o.output = tmp / "cold.sqsh";
  ::setenv("TRAINIMG_CACHE", (tmp / "cache-cold").c_str(), 1);
  import_image(o);
  ::unsetenv("TRAINIMG_ALLOW_HTTP");
  ::unsetenv("TRAINIMG_CACHE");
  EXPECT_TRUE(warm.notes.empty()) << warm.notes.front();
  expect_same_image(tmp / "cold.sqsh", tmp / "warm.sqsh");

  // Which layer blobs the new image's manifest names, and their sizes.
  auto index = nlohmann::json::parse(std::ifstream(tmp / "oci-new/index.json"));
  const std::string digest = index["manifests"][0]["digest"];
  auto manifest = nlohmann::json::parse(std::ifstream(tmp / ("oci-new/blobs/sha256/" + digest.substr(7))));
  ASSERT_EQ(manifest["layers"].size(), 3u);
  std::set<std::string> cached;
  for (const auto& e : fs::recursive_directory_iterator(cache_new.path()))
    if (e.is_regular_file()) cached.insert(e.path().filename().string());
  auto in_cache = [&](const nlohmann::json& l) {
    const std::string hex = l["digest"].get<std::string>().substr(7);
    for (const std::string& f : cached)
      if (f.find(hex) != std::string::npos) return true;
    return false;
  };
  // The base layer is reused whole; the middle one holds bytes the old image
  // lacks (it hid /srv/hidden-in-old), so it is fetched; the top is new.
  EXPECT_FALSE(in_cache(manifest["layers"][0])) << events.str();
  EXPECT_TRUE(in_cache(manifest["layers"][1])) << events.str();
  EXPECT_TRUE(in_cache(manifest["layers"][2])) << events.str();
  nlohmann::json reuse;
  uint64_t downloaded = 0;
  std::istringstream lines(events.str());
  for (std::string line; std::getline(lines, line);) {
    auto j = nlohmann::json::parse(line);
    if (j["phase"] == "reuse") reuse = j["reuse"];
    // Each walk that fetches reports its own downloads: the merge pass the
    // new layer's, the data pass the middle one's.
    if (j["phase"] == "download" && j["files"] == j["total_files"]) downloaded += j["bytes"].get<uint64_t>();
  }
  EXPECT_EQ(reuse["bytes_not_fetched"], manifest["layers"][0]["size"]) << events.str();
  EXPECT_EQ(reuse["layer_ids"].size(), 1u) << events.str();
  EXPECT_EQ(downloaded,
            manifest["layers"][1]["size"].get<uint64_t>() + manifest["layers"][2]["size"].get<uint64_t>())
      << events.str();
}

// Seeded random layer stacks (docker's rules for layers: parent directories
// before their children, a path once per layer, whiteouts beside what they
// hide, hard links to an earlier member of the same layer), so that the
// cases nobody wrote down are met too: a file over a directory and back, a
// whiteout of a directory or of nothing, an opaque directory over a
// symlink, links whose other name a later layer replaces.
class RandomLayers {
 public:
  explicit RandomLayers(uint32_t seed) : rng_(seed) {}

  LayerSpec layer() {
    LayerSpec l;
    std::map<std::string, inspect::EntryType> emitted;    // this layer's paths
    std::set<std::string> whited;                         // and what it whites out
    std::vector<std::pair<std::string, uint32_t>> files;  // link targets: this layer's files
    const int ops = 4 + static_cast<int>(pick(14));
    for (int i = 0; i < ops; ++i) {
      const std::string p = path();
      if (blocked(p, emitted, whited)) continue;
      const uint32_t what = pick(100);
      if (what < 12) {  // a whiteout, of something or of nothing
        if (!parents(l, p, emitted)) continue;
        whited.insert(p);
        l.whiteout(p);
        continue;
      }
      if (!parents(l, p, emitted)) continue;
      if (what < 20) {
        l.dir(p, pick(2) ? 0755 : 0700);
        emitted[p] = inspect::EntryType::Dir;
        if (pick(2)) {
          l.opaque(p);
          emitted[p + "/.wh..wh..opq"] = inspect::EntryType::File;
        }
      } else if (what < 30) {
        l.symlink(p, "target-" + std::to_string(pick(5)));
        emitted[p] = inspect::EntryType::Symlink;
      } else if (what < 42 && !files.empty()) {
        const auto& [target, mode] = files[pick(static_cast<uint32_t>(files.size()))];
        inspect::testing::SpecEntry s;
        s.entry.path = p;
        s.entry.type = inspect::EntryType::Hardlink;
        s.entry.mode = mode;  // a link's header sets the shared inode's mode: keep it
        s.entry.link_target = target;
        l.raw(std::move(s));
        emitted[p] = inspect::EntryType::Hardlink;
      } else {
        const uint32_t mode = pick(3) == 0 ? 0755 : 0644;
        l.file(p, data(), mode);
        emitted[p] = inspect::EntryType::File;
        files.emplace_back(p, mode);
      }
    }
    return l;
  }

 private:
  uint32_t pick(uint32_t n) { return static_cast<uint32_t>(rng_() % n); }
  // /t/x, /t/x/y, /t/x/y/z with x, y, z of {a, b, c, d}: few enough names that
  // layers keep meeting each other's paths.
  std::string path() {
    std::string p = "/t";
    const uint32_t r = pick(20), depth = r < 1 ? 1 : r < 5 ? 2 : 3;  // mostly deep: fewer subtrees lost
    for (uint32_t i = 0; i < depth; ++i) p += std::string("/") + "abcd"[pick(4)];
    return p;
  }
  std::string data() {
    switch (pick(6)) {
      case 0: return "";
      case 1: return noise(128 * 1024, rng_());                     // exactly one block
      case 2: return noise(128 * 1024 + 1 + pick(300000), rng_());  // blocks and a tail
      default: return "text " + std::to_string(rng_()) + "\n";
    }
  }
  static bool related(const std::string& a, const std::string& b) {
    return a == b || b.starts_with(a + "/") || a.starts_with(b + "/");
  }
  // A path this layer already has, or one under or over a path it has or
  // whites out (a directory it emitted may still get children).
  static bool blocked(const std::string& p, const std::map<std::string, inspect::EntryType>& emitted,
                      const std::set<std::string>& whited) {
    for (const auto& w : whited)
      if (related(w, p)) return true;
    for (const auto& [q, type] : emitted) {
      if (q == p) return true;
      if (p.starts_with(q + "/") && type != inspect::EntryType::Dir) return true;
      if (q.starts_with(p + "/")) return true;
    }
    return false;
  }
  // The parent directories of `p`, each once per layer, as docker writes them.
  bool parents(LayerSpec& l, const std::string& p, std::map<std::string, inspect::EntryType>& emitted) {
    for (size_t at = p.find('/', 1); at != std::string::npos; at = p.find('/', at + 1)) {
      const std::string d = p.substr(0, at);
      auto it = emitted.find(d);
      if (it == emitted.end()) {
        l.dir(d);
        emitted[d] = inspect::EntryType::Dir;
      } else if (it->second != inspect::EntryType::Dir) {
        return false;
      }
    }
    return true;
  }

  std::mt19937 rng_;
};

// Every random stack: the import that copies the shared layers' blocks from
// the old image gives the cold import's image, and the cold import's /t is
// the layers applied to a directory by the builder's own rules
// (write_rootfs), names, types, modes, sizes, link counts and bytes. Across
// seeds the layers are read side by side (uncompressed archives) and in one
// walk (gzip), with 1 to 3 jobs.
TEST(ImportReuse, RandomLayerStacksReusedGiveTheColdImageAndTheLayersAppliedToADirectory) {
  // TRAINIMG_RANDOM_SEEDS=N runs more of them (a longer hunt, by hand).
  const char* more = std::getenv("TRAINIMG_RANDOM_SEEDS");
  const uint32_t seeds = more ? static_cast<uint32_t>(std::stoul(more)) : 24;
  uint64_t lent = 0, listed = 0;
  for (uint32_t seed = 1; seed <= seeds; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    TempDir tmp;
    RandomLayers gen(seed);
    ImageSpec oldi, newi;
    oldi.tag = "trainimg-random-old:1";
    newi.tag = "trainimg-random-new:1";
    const uint32_t shared = 1 + seed % 3;
    for (uint32_t i = 0; i < shared; ++i) {
      LayerSpec l = gen.layer();
      if (i == 0 && (l.entries.empty() || l.entries[0].entry.path != "/t"))
        l.entries.insert(l.entries.begin(), LayerSpec().dir("/t").entries[0]);
      oldi.layers.push_back(l);
      newi.layers.push_back(l);
    }
    for (uint32_t i = 0; i < seed % 2 + 1; ++i) oldi.layers.push_back(gen.layer());
    for (uint32_t i = 0; i < (seed / 2) % 2 + 1; ++i) newi.layers.push_back(gen.layer());
    const auto c = seed % 4 == 3 ? inspect::testing::Compression::Gzip : inspect::testing::Compression::None;
    inspect::testing::write_docker_archive(oldi, tmp / "old.tar", inspect::testing::ArchiveLayout::Oci, c);
    inspect::testing::write_docker_archive(newi, tmp / "new.tar", inspect::testing::ArchiveLayout::Oci, c);

    ImportOptions o = options("docker-archive:" + tmp / "old.tar", tmp / "old.sqsh");
    o.jobs = 1 + seed % 3;
    ImportResult old = import_image(o);
    ASSERT_TRUE(old.notes.empty()) << old.notes.front();
    o = options("docker-archive:" + tmp / "new.tar", tmp / "cold.sqsh");
    o.jobs = 1 + (seed + 1) % 3;
    import_image(o);
    o.output = tmp / "warm.sqsh";
    o.jobs = 1 + (seed + 2) % 3;
    o.reuse = {tmp / "old.sqsh"};
    ImportResult warm = import_image(o);
    EXPECT_TRUE(warm.notes.empty()) << warm.notes.front();
    EXPECT_EQ(warm.sidecar["reuse"]["shared_layers"], shared) << warm.sidecar["reuse"].dump();
    expect_same_image(tmp / "cold.sqsh", tmp / "warm.sqsh");
    lent += warm.sidecar["reuse"]["files"].get<uint64_t>();

    inspect::testing::write_rootfs(newi, tmp / "rootfs");
    // A directory's size is the file system's business: left out.
    const std::string list =
        " \\( -type d -printf '%P d %m\\n' \\) -o -printf '%P %y %m %s %l %n\\n' | LC_ALL=C sort";
    auto got = sh("unsquashfs -q -d " + tmp / "x" + " " + tmp / "cold.sqsh" + " >/dev/null && find " +
                  tmp / "x/t" + list);
    auto want = sh("find " + tmp / "rootfs/t" + list);
    ASSERT_EQ(got.status, 0) << got.output;
    EXPECT_EQ(got.output, want.output);
    listed += static_cast<uint64_t>(std::count(want.output.begin(), want.output.end(), '\n'));
    auto bytes = sh("diff -r --no-dereference " + tmp / "rootfs/t" + " " + tmp / "x/t");
    EXPECT_EQ(bytes.status, 0) << bytes.output;
    if (HasFailure()) {
      for (size_t i = 0; i < newi.layers.size(); ++i)
        for (const auto& e : newi.layers[i].entries)
          std::cerr << "layer " << i << ": " << e.entry.path << " " << static_cast<int>(e.entry.type) << " "
                    << std::oct << e.entry.mode << std::dec << " " << e.data.size() << " "
                    << e.entry.link_target << "\n";
      return;
    }
  }
  // Not a vacuous pass: blocks were lent and trees compared.
  EXPECT_GT(lent, seeds) << "files lent over all seeds";
  EXPECT_GT(listed, 4 * seeds) << "entries compared over all seeds";
}

}  // namespace
}  // namespace trainimg::builder
