// SPDX-License-Identifier: GPL-3.0-or-later
// Block reuse (issue 26): an import that copies the blocks of an earlier
// image must give the image a cold import gives, as sqfsdiff (squashfs-tools-
// ng) and `unsquashfs -lln` see it; an earlier image that cannot lend is
// refused with a note and the import goes on cold.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
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

}  // namespace
}  // namespace trainimg::builder
