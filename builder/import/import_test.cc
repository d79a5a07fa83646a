// SPDX-License-Identifier: GPL-3.0-or-later
// The import against enroot's real pipeline, run by hand with the real tools:
// `docker create` + `docker export | tar -px --exclude='dev/*'
// --exclude='.dockerenv'`, enroot's fixperms (`chmod -R u+rX`, `find
// -maxdepth 15 -type d … chmod u+w`), enroot's four files, and `mksquashfs
// -all-root -comp lzo -noD`. Both images are listed with `unsquashfs -lln`
// and extracted with `unsquashfs`; every path, type, mode, owner, size, link
// target, link count and byte must be equal. mtimes are the documented
// difference (trainimg's are reproducible). Needs dockerd and root; skipped
// with the reason otherwise.
#include "builder/import/import.h"

#include <gtest/gtest.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include "builder/import/enroot_config.h"
#include "builder/publish/publish.h"
#include "common/error.h"
#include "common/sha256.h"
#include "inspect/testing/image_builder.h"

namespace trainimg::builder {
namespace {

namespace fs = std::filesystem;
using inspect::testing::ImageSpec;
using inspect::testing::TempDir;

struct ShellRun {
  int rc;
  std::string out;
};

ShellRun sh(const std::string& cmd) {
  ShellRun r{-1, {}};
  FILE* p = ::popen(("set -e; " + cmd).c_str(), "r");
  if (!p) return r;
  char buf[65536];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) r.out.append(buf, n);
  int st = ::pclose(p);
  r.rc = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return r;
}

bool have_docker() {
  return ::access("/var/run/docker.sock", W_OK) == 0 && sh("docker info >/dev/null 2>&1").rc == 0;
}

// The fixture: three layers exercising what the merge and the fix-ups must
// get right.
ImageSpec fixture() {
  ImageSpec img;
  img.tag = "trainimg-import-fixture:1";
  img.layer()
      .dir("/etc")
      .file("/etc/hosts", "127.0.0.1 localhost\n")
      .file("/etc/passwd", "root:x:0:0::/root:/bin/sh\n")
      .dir("/bin")
      .file("/bin/tool", "old tool\n", 0755)
      .hardlink("/bin/tool2", "/bin/tool")
      .file("/bin/su", "setuid\n", 04755)
      .dir("/data")
      .dir("/data/old")
      .file("/data/old/f", "gone\n")
      .dir("/opt")
      .dir("/opt/keep")
      .file("/opt/keep/a.txt", "lower\n")
      .file("/empty", "")
      .symlink("/dangling", "/no/where")
      .dir("/run")
      .fifo("/run/fifo")
      .file(
          "/\xc3\xbc"
          "n\xc3\xaf"
          "c\xc3\xb6"
          "d\xc3\xa9 na\xc3\xaf"
          "ve.txt",
          "unicode\n")
      .dir("/ro", 0555)
      .file("/ro/f", "read only\n", 0444)
      .file("/noperm", "no permission bits\n", 0000)
      .file("/xonly", "group x\n", 0010)
      .dir("/var")
      .dir("/var/lib")
      .dir("/var/lib/lists")
      .file("/var/lib/lists/big", std::string(300000, 'a'));
  img.layer()
      .whiteout("/data/old")
      .opaque("/opt/keep")
      .file("/opt/keep/b.txt", "upper\n")
      .file("/bin/tool", "new tool\n", 0755);
  img.layer().whiteout("/var/lib/lists").file("/etc/passwd", "root:x:0:0::/root:/bin/bash\n");
  img.config.env = {"PATH=/usr/bin:/bin", "A=${B}:x"};
  img.config.entrypoint = {"/bin/tool"};
  img.config.cmd = {"--flag", "it's"};
  img.config.workdir = "/workspace/deep";
  img.config.labels = {{"maintainer", "h"}};
  img.config.volumes = {"/data"};
  return img;
}

void write_text(const fs::path& p, const std::string& s) {
  std::ofstream(p, std::ios::binary) << s;
}

// enroot's `docker::configure` on a tree, with its formats from enroot_config
// (those are pinned against enroot's own bash in enroot_config_test.cc).
void enroot_configure(const fs::path& root, const inspect::ImageConfig& c, const std::string& uri) {
  fs::create_directories(root / "etc");
  write_text(root / "etc/fstab", enroot_fstab(c));
  write_text(root / "etc/environment", enroot_environment(c));
  write_text(root / "etc/rc", enroot_rc(c, uri));
  write_text(root / "etc/rc.local", enroot_rc_local());
  fs::create_directories(root / enroot_workdir(c).substr(1));
}

// `unsquashfs -lln` without the date and time columns (and without the
// size of directories, which depends on the directory table layout).
std::string listing(const std::string& img) {
  ShellRun r = sh("unsquashfs -lln '" + img + "'");
  EXPECT_EQ(r.rc, 0) << img;
  std::istringstream in(r.out);
  std::string line, out;
  static const std::regex re(R"(^(\S+) (\S+)\s+(\d+) \S+ \S+ (.*)$)");
  while (std::getline(in, line)) {
    std::smatch m;
    if (!std::regex_match(line, m, re)) continue;
    std::string size = m[1].str()[0] == 'd' ? "-" : m[3].str();
    out += m[1].str() + " " + m[2].str() + " " + size + " " + m[4].str() + "\n";
  }
  return out;
}

// Every path of an extracted tree: type+mode, owner, size, link target, nlink, bytes.
std::map<std::string, std::string> tree(const fs::path& root) {
  std::map<std::string, std::string> out;
  for (auto it = fs::recursive_directory_iterator(root); it != fs::recursive_directory_iterator(); ++it) {
    struct stat st {};
    ::lstat(it->path().c_str(), &st);
    std::ostringstream s;
    s << std::oct << st.st_mode << std::dec << " " << st.st_uid << ":" << st.st_gid
      << " nlink=" << st.st_nlink;
    if (S_ISREG(st.st_mode)) {
      std::ifstream f(it->path(), std::ios::binary);
      s << " size=" << st.st_size << " data=" << std::string((std::istreambuf_iterator<char>(f)), {});
    } else if (S_ISLNK(st.st_mode)) {
      s << " -> " << fs::read_symlink(it->path()).string();
    }
    out[fs::relative(it->path(), root).string()] = s.str();
  }
  return out;
}

std::map<std::string, std::string> extract(const std::string& img, const fs::path& dir) {
  EXPECT_EQ(sh("unsquashfs -no-progress -d '" + dir.string() + "' '" + img + "' >/dev/null").rc, 0);
  return tree(dir);
}

class ImportVsEnroot : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root (tar -p and unsquashfs keep owners only as root)";
    if (!have_docker()) GTEST_SKIP() << "needs a running dockerd at /var/run/docker.sock";
    ::umask(022);
    img_ = fixture();
    // A tag of this process's own: ctest runs the tests of this fixture in
    // parallel, and one's TearDown (docker rmi) must not remove the other's image.
    img_.tag = "trainimg-import-fixture:" + std::to_string(::getpid());
    archive_ = tmp_ / "img.tar";
    inspect::testing::write_docker_archive(img_, archive_, inspect::testing::ArchiveLayout::Legacy);
    ASSERT_EQ(sh("docker load -q -i " + archive_ + " >/dev/null").rc, 0);
  }
  void TearDown() override { sh("docker rmi -f " + img_.tag + " >/dev/null 2>&1 || true"); }

  // enroot's pipeline by hand, from the daemon's export of the same image.
  std::string reference(const std::string& uri) {
    fs::path ref = tmp_ / "ref";
    std::string r = ref.string();
    fs::create_directories(ref);
    ShellRun run =
        sh("cid=$(docker create " + img_.tag + " true); docker export $cid | tar -C " + r +
           " --warning=no-timestamp --anchored --exclude='dev/*' --exclude='.dockerenv' -px; docker rm $cid "
           ">/dev/null; chmod -f -R u+rX " +
           r + " || :; find " + r + " -maxdepth 15 -type d ! -perm -u=w -exec chmod -f u+w {} \\+ || :");
    EXPECT_EQ(run.rc, 0) << run.out;
    enroot_configure(ref, img_.config, uri);
    std::string out = tmp_ / "ref.sqsh";
    EXPECT_EQ(sh("mksquashfs " + r + " " + out + " -all-root -comp lzo -noD -noappend -quiet >/dev/null").rc,
              0);
    fs::remove_all(ref);
    return out;
  }

  void expect_same(const std::string& ours, const std::string& ref) {
    EXPECT_EQ(listing(ours), listing(ref));
    auto a = extract(ours, tmp_ / "x-ours");
    auto b = extract(ref, tmp_ / "x-ref");
    EXPECT_EQ(a.size(), b.size());
    for (const auto& [path, facts] : b) EXPECT_EQ(a[path], facts) << path;
    for (const auto& [path, facts] : a) EXPECT_TRUE(b.count(path)) << "extra path in ours: " << path;
    fs::remove_all(tmp_ / "x-ours");
    fs::remove_all(tmp_ / "x-ref");
    ShellRun rd = sh("rdsquashfs -l / '" + ours + "' >/dev/null");
    EXPECT_EQ(rd.rc, 0) << "rdsquashfs cannot read " << ours;
  }

  TempDir tmp_dir_;
  fs::path tmp_{tmp_dir_.path()};
  ImageSpec img_;
  std::string archive_;
};

TEST_F(ImportVsEnroot, DockerdImportEqualsEnrootsPipelineOnTheSameImage) {
  std::string uri = "dockerd://" + img_.tag;
  ImportOptions o;
  o.source = uri;
  o.output = tmp_ / "ours.sqsh";
  o.enroot_defaults = true;
  ImportResult r = import_image(o);
  EXPECT_EQ(r.passes, 1u);
  EXPECT_FALSE(r.info.data_compressed);
  EXPECT_EQ(r.info.compressor, sqsh::Compressor::Lzo);
  expect_same(o.output, reference(uri));
  EXPECT_TRUE(fs::exists(o.output + ".json"));
}

TEST_F(ImportVsEnroot, DockerArchiveImportMergesLayersLikeTheDaemon) {
  std::string uri = "docker-archive:" + archive_;
  ImportOptions o;
  o.source = uri;
  o.output = tmp_ / "ours.sqsh";
  ImportResult r = import_image(o);
  EXPECT_EQ(r.passes, 1u);
  expect_same(o.output, reference(uri));
  // Only the final versions' bytes are in the image: the 300000 bytes that a
  // later layer deleted are not (zstd would shrink them, so check the input).
  EXPECT_LT(r.input_bytes, 1000u);
}

// The TTY line shows the phase the import is in and, while layers still
// download under it, the download's share; events arrive interleaved.
TEST(ImportProgressTty, DownloadSharesTheLineWithThePhaseUntilEveryLayerIsReady) {
  std::ostringstream err;
  ImportProgressFn p = import_progress_printer("tty", err, false);
  auto event = [&](std::string phase, uint64_t files, uint64_t bytes, uint64_t total_files,
                   uint64_t total_bytes) {
    ImportProgress e;
    e.phase = std::move(phase);
    e.files = files;
    e.bytes = bytes;
    e.total_files = total_files;
    e.total_bytes = total_bytes;
    p(e);
    std::string s = err.str();
    err.str("");
    return s;
  };
  EXPECT_EQ(event("resolve", 0, 0, 0, 0), "\r\033[Kresolve: 0 files, 0 bytes");
  EXPECT_EQ(event("download", 1, 3u << 20, 3, 8u << 20),
            "\r\033[Kresolve: 0 files, 0 bytes; download: 1/3 layers, 3.0 MiB of 8.0 MiB");
  EXPECT_EQ(event("merge", 0, 0, 0, 0),
            "\r\033[Kmerge: 0 files, 0 bytes; download: 1/3 layers, 3.0 MiB of 8.0 MiB");
  EXPECT_EQ(event("download", 3, 8u << 20, 3, 8u << 20),
            "\r\033[Kmerge: 0 files, 0 bytes; download: 3/3 layers, 8.0 MiB of 8.0 MiB");
  // Every layer ready: the download drops out of the line.
  EXPECT_EQ(event("data", 10, 2048, 20, 4096), "\r\033[Kdata: 10 files, 2.0 KiB of 20 files, 4.0 KiB");
  EXPECT_EQ(event("done", 20, 4096, 20, 4096), "\r\033[Kdone: 20 files, 4.0 KiB of 20 files, 4.0 KiB\n");
}

TEST(ImportReproducible, SameImageAndSourceDateEpochGiveIdenticalBytes) {
  TempDir tmp;
  ImageSpec img = fixture();
  std::string archive = tmp / "img.tar";
  inspect::testing::write_docker_archive(img, archive);
  ImportOptions o;
  o.source = "docker-archive:" + archive;
  o.source_date_epoch = 1700000000;
  o.jobs = 4;
  o.output = tmp / "a.sqsh";
  import_image(o);
  o.output = tmp / "b.sqsh";
  o.jobs = 1;
  import_image(o);
  EXPECT_EQ(sh("cmp " + tmp / "a.sqsh" + " " + tmp / "b.sqsh").rc, 0);
  ShellRun l = sh("unsquashfs -lln " + tmp / "a.sqsh" + " | awk '{print $4}' | sort -u");
  // The fixture's files carry mtime 0 and keep it; generated files get
  // SOURCE_DATE_EPOCH, and nothing is later than it.
  EXPECT_EQ(l.out, "1970-01-01\n2023-11-14\n");
}

// docker:// from the real registry of .ci/start-registry.sh: the same image
// pushed there with skopeo (from an OCI layout with gzip layers) imports,
// without a daemon, to the same bytes as its docker archive under
// SOURCE_DATE_EPOCH (/etc/rc's provenance line then names the config
// digest, not the source); the sidecar and the JSON progress events carry the
// resolved manifest digest.
TEST(ImportRegistry, SameImageAsTheDockerArchiveWithSourceDateEpoch) {
  const char* tmpdir = std::getenv("TMPDIR");
  std::string state = std::getenv("TRAINIMG_REGISTRY_STATE")
                          ? std::getenv("TRAINIMG_REGISTRY_STATE")
                          : std::string(tmpdir ? tmpdir : "/tmp") + "/trainimg-registry";
  if (!fs::exists(state + "/env") ||
      sh("curl -s -o /dev/null --max-time 2 http://127.0.0.1:5500/v2/").rc != 0) {
    if (std::getenv("TRAINIMG_CI")) FAIL() << "the test registry is not running (.ci/start-registry.sh)";
    GTEST_SKIP() << "no test registry (run .ci/start-registry.sh)";
  }
  TempDir tmp, cache;
  ImageSpec img = fixture();
  inspect::testing::write_docker_archive(img, tmp / "img.tar");
  inspect::testing::write_oci_layout(img, tmp / "oci");
  ASSERT_EQ(sh("skopeo copy --quiet --dest-tls-verify=false oci:" + tmp / "oci" +
               ":1 docker://127.0.0.1:5500/test/import-fixture:1 >/dev/null")
                .rc,
            0);
  ::setenv("TRAINIMG_ALLOW_HTTP", "1", 1);
  ::setenv("TRAINIMG_CACHE", cache.path().c_str(), 1);
  ImportOptions o;
  o.source_date_epoch = 1700000000;
  o.inspect = false;
  o.source = "docker-archive:" + tmp / "img.tar";
  o.output = tmp / "archive.sqsh";
  import_image(o);
  o.source = "docker://127.0.0.1:5500#test/import-fixture:1";
  o.output = tmp / "registry.sqsh";
  std::ostringstream events;
  ImportResult r = import_image(o, import_progress_printer("json", events, false));
  // --jobs 1 from an empty cache: a layer read while its blob downloads
  // gives its one CPU slot back while it waits (cpu_slots.h), else this hangs.
  TempDir cache1;
  ::setenv("TRAINIMG_CACHE", cache1.path().c_str(), 1);
  o.output = tmp / "registry-j1.sqsh";
  o.jobs = 1;
  import_image(o);
  o.jobs = 0;
  ::unsetenv("TRAINIMG_ALLOW_HTTP");
  ::unsetenv("TRAINIMG_CACHE");
  EXPECT_EQ(sh("cmp " + tmp / "registry.sqsh" + " " + tmp / "registry-j1.sqsh").rc, 0);
  auto listing = [&](const std::string& img) {
    return sh("unsquashfs -lln " + img + " | grep -v ' squashfs-root/etc/rc$'").out;
  };
  std::string want = listing(tmp / "archive.sqsh");
  EXPECT_GT(want.size(), 1000u);
  EXPECT_EQ(listing(tmp / "registry.sqsh"), want);
  EXPECT_EQ(sh("cmp " + tmp / "archive.sqsh" + " " + tmp / "registry.sqsh").rc, 0);
  EXPECT_EQ(sh("unsquashfs -cat " + tmp / "registry.sqsh" + " etc/rc | head -1").out,
            "# enroot-provenance: " + r.sidecar["config_digest"].get<std::string>() + "\n");
  EXPECT_EQ(r.passes, 1u);
  // The manifest digest skopeo pushed, in the sidecar and in every progress event.
  auto index = nlohmann::json::parse(std::ifstream(tmp / "oci/index.json"));
  const std::string digest = index["manifests"][0]["digest"];
  EXPECT_EQ(r.sidecar["image_digest"], digest) << r.sidecar.dump();
  std::istringstream lines(events.str());
  std::set<std::string> phases;
  nlohmann::json last_download;
  uint64_t download_bytes = 0;
  for (std::string line; std::getline(lines, line);) {
    auto j = nlohmann::json::parse(line);
    phases.insert(j["phase"].get<std::string>());
    EXPECT_EQ(j["image_digest"], digest) << line;
    if (j["phase"] == "download") {
      EXPECT_GE(j["bytes"].get<uint64_t>(), download_bytes) << line;  // never backwards
      download_bytes = j["bytes"];
      last_download = j;
    }
  }
  EXPECT_TRUE(phases.count("resolve") && phases.count("download") && phases.count("merge") &&
              phases.count("done"))
      << events.str();
  // The download ends with every layer blob ready: the manifest's count and bytes.
  auto manifest = nlohmann::json::parse(std::ifstream(tmp / ("oci/blobs/sha256/" + digest.substr(7))));
  uint64_t layer_bytes = 0;
  for (const auto& l : manifest["layers"]) layer_bytes += l["size"].get<uint64_t>();
  EXPECT_EQ(last_download["files"], manifest["layers"].size()) << events.str();
  EXPECT_EQ(last_download["total_files"], manifest["layers"].size()) << events.str();
  EXPECT_EQ(last_download["bytes"], layer_bytes) << events.str();
  EXPECT_EQ(last_download["total_bytes"], layer_bytes) << events.str();
}

// dockerd:// without SOURCE_DATE_EPOCH: the daemon's export carries what
// `docker create` wrote with the clock (/etc/hosts…, /etc, /dev, a missing
// /sys and WORKDIR), so the reference time is the image's `created`. The
// image comes from `docker import` (its `created` is that command's time) of
// a rootfs with files older and newer than it, its own /proc and a WORKDIR
// below an existing /w that the create must make.
class DockerdReproducible : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!have_docker()) GTEST_SKIP() << "needs a running dockerd at /var/run/docker.sock";
    tag_ = "trainimg-import-repro:" + std::to_string(::getpid());
    std::string root = tmp_dir_ / "root";
    ShellRun mk =
        sh("mkdir -p " + root + "/bin " + root + "/etc " + root + "/proc " + root + "/w && echo hi > " +
           root + "/bin/hello && echo 'root:x:0:0::/:/bin/sh' > " + root + "/etc/passwd && echo later > " +
           root + "/future && touch -d @4000000000 " + root + "/future && touch -h -d @1600000000 " + root +
           "/bin/hello " + root + "/bin " + root + "/etc/passwd " + root + "/etc " + root + "/proc " + root +
           "/w && tar -C " + root + " --numeric-owner -cf " + tmp_dir_ / "root.tar" +
           " . && docker import -c 'WORKDIR /w/a' -c 'CMD [\"/bin/hello\"]' " + tmp_dir_ / "root.tar" + " " +
           tag_ + " >/dev/null && date -u -d \"$(docker image inspect -f '{{.Created}}' " + tag_ + ")\" +%s");
    ASSERT_EQ(mk.rc, 0) << mk.out;
    created_ = std::stoll(mk.out);
  }
  void TearDown() override { sh("docker rmi -f " + tag_ + " >/dev/null 2>&1 || true"); }

  // mtime in seconds of each path of the image, as unsquashfs extracts it.
  std::map<std::string, int64_t> mtimes(const std::string& img) {
    fs::path x = tmp_dir_ / "x";
    fs::remove_all(x);
    EXPECT_EQ(sh("unsquashfs -no-progress -d " + x.string() + " " + img + " >/dev/null").rc, 0);
    std::map<std::string, int64_t> out;
    std::istringstream in(sh("cd " + x.string() + " && find . -mindepth 1 -exec stat -c '%Y %n' {} +").out);
    int64_t t;
    std::string path;
    while (in >> t >> path) out[path.substr(1)] = t;
    fs::remove_all(x);
    return out;
  }

  TempDir tmp_dir_;
  std::string tag_;
  int64_t created_ = 0;
};

TEST_F(DockerdReproducible, SameImageGivesIdenticalBytesWithoutSourceDateEpoch) {
  ImportOptions o;
  o.source = "dockerd://" + tag_;
  o.output = tmp_dir_ / "a.sqsh";
  ImportResult a = import_image(o);
  // The second container is created in another second of the clock.
  ::usleep(1100000);
  o.output = tmp_dir_ / "b.sqsh";
  o.jobs = 1;
  import_image(o);
  EXPECT_EQ(sh("cmp " + tmp_dir_ / "a.sqsh" + " " + tmp_dir_ / "b.sqsh" + " 2>&1").rc, 0);
  EXPECT_EQ(a.sidecar["reference_mtime"],
            (nlohmann::ordered_json{{"seconds", created_}, {"from", "image_created"}}));
  EXPECT_EQ(a.info.mtime, 0u);  // the super block, as for every source without SOURCE_DATE_EPOCH

  auto t = mtimes(tmp_dir_ / "a.sqsh");
  // The image's own mtimes.
  for (const char* p : {"/bin", "/bin/hello", "/etc/passwd", "/proc"}) EXPECT_EQ(t[p], 1600000000) << p;
  // Newer than the image (clamped), written by `docker create`, enroot's files.
  for (const char* p : {"/future", "/etc", "/etc/hosts", "/etc/hostname", "/etc/resolv.conf", "/dev", "/sys",
                        "/w", "/w/a", "/etc/rc", "/etc/rc.local", "/etc/environment", "/etc/fstab"})
    EXPECT_EQ(t[p], created_) << p;
  EXPECT_EQ(t.count("/.dockerenv"), 0u);
  // Nothing in the image is later than `created`.
  for (const auto& [path, mtime] : t) EXPECT_LE(mtime, created_) << path;
}

TEST_F(DockerdReproducible, SourceDateEpochStillWins) {
  ImportOptions o;
  o.source = "dockerd://" + tag_;
  o.output = tmp_dir_ / "a.sqsh";
  o.source_date_epoch = 1700000000;
  ImportResult r = import_image(o);
  EXPECT_EQ(r.sidecar["reference_mtime"],
            (nlohmann::ordered_json{{"seconds", 1700000000}, {"from", "source_date_epoch"}}));
  EXPECT_EQ(r.info.mtime, 1700000000u);
  auto t = mtimes(tmp_dir_ / "a.sqsh");
  EXPECT_EQ(t["/bin/hello"], 1600000000);
  for (const char* p :
       {"/future", "/etc", "/etc/hosts", "/etc/rc", "/etc/environment", "/dev", "/sys", "/w/a"})
    EXPECT_EQ(t[p], 1700000000) << p;
}

TEST(ImportPublish, ExistingOutputIsRefusedWithoutForceAndReplacedWithIt) {
  TempDir tmp;
  ImageSpec img = fixture();
  inspect::testing::write_rootfs(img, tmp / "root");
  std::string out = tmp / "img.sqsh";
  write_text(out, "old");
  ImportOptions o;
  o.source = "dir:" + tmp / "root";
  o.output = out;
  EXPECT_THROW(import_image(o), Error);
  EXPECT_EQ(inspect::testing::read_bytes(out), "old");
  o.force = true;
  ImportResult r = import_image(o);
  EXPECT_EQ(r.passes, 1u);
  EXPECT_EQ(sh("unsquashfs -cat " + out + " etc/rc.local").out, enroot_rc_local());
  EXPECT_EQ(sh("unsquashfs -cat " + out + " etc/hosts").out, "");  // Docker's init layer
  EXPECT_EQ(sh("ls " + tmp.path()).out, "img.sqsh\nimg.sqsh.json\nroot\n");
  auto side = nlohmann::ordered_json::parse(inspect::testing::read_bytes(out + ".json"));
  EXPECT_EQ(side["schema"], "trainimg.import/v1");
  EXPECT_EQ(side["source"], "dir:" + tmp / "root");
  EXPECT_EQ(side["sizes"]["image_bytes"], fs::file_size(out));
  EXPECT_EQ(side["inspect"]["schema"], "trainimg.inspect/v1") << side.dump(2);
  EXPECT_TRUE(side["inspect"]["verdict"].is_string());
  EXPECT_EQ(r.sidecar, side);
}

// The sidecar's content digest (the shared Pyxis cache's) is taken while
// the image is verified, inspected and published, through a descriptor of
// its own: it is the digest of the published file, and the inspection's
// verdict (read from the unpublished file) is there as before.
TEST(ImportPublish, ContentDigestIsThatOfThePublishedFile) {
  TempDir tmp;
  ImageSpec img = fixture();
  inspect::testing::write_rootfs(img, tmp / "root");
  ImportOptions o;
  o.source = "dir:" + tmp / "root";
  o.output = tmp / "img.sqsh";
  o.content_digest = true;
  ImportResult r = import_image(o);
  auto side = nlohmann::ordered_json::parse(inspect::testing::read_bytes(o.output + ".json"));
  ASSERT_TRUE(side["sqsh_sha256"].is_string()) << side.dump(2);
  EXPECT_EQ(side["sqsh_sha256"], sha256_file(o.output));
  EXPECT_EQ(side["inspect"]["facts"]["image"]["reference"], o.output) << side.dump(2);
  EXPECT_TRUE(side["inspect"]["verdict"].is_string());
  EXPECT_EQ(r.sidecar, side);
  o.content_digest = false;
  o.force = true;
  import_image(o);
  side = nlohmann::ordered_json::parse(inspect::testing::read_bytes(o.output + ".json"));
  EXPECT_FALSE(side.contains("sqsh_sha256"));
}

// A one-layer image is written in one pass, each file as it comes. When a
// later member of the same tar replaces a file already written (a duplicate
// member), or a hard link made before the replacement keeps the old bytes
// under another name, the one pass is thrown away and the image written in
// two: every path holds its final bytes, and no dead bytes are stored.
TEST(ImportOnePass, AReplacedFileFallsBackToTwoPassesWithTheFinalBytes) {
  TempDir tmp;
  ImageSpec img;
  img.tag = "dup:1";
  img.layer()
      .dir("/d")
      .file("/d/a", "old bytes of a")
      .hardlink("/d/b", "/d/a")
      .file("/d/c", "first c")
      .file("/d/a", "new bytes of a")
      .file("/d/c", "second c")
      .file("/d/keep", "kept");
  inspect::testing::write_docker_archive(img, tmp / "img.tar");
  ImportOptions o;
  o.source = "docker-archive:" + tmp / "img.tar";
  o.output = tmp / "img.sqsh";
  o.inspect = false;
  o.source_date_epoch = 1700000000;  // /etc/rc names the config digest: the same length for both images
  ImportResult r = import_image(o);
  EXPECT_EQ(r.passes, 2u);
  auto cat = [&](const std::string& p) { return sh("unsquashfs -cat " + tmp / "img.sqsh" + " " + p).out; };
  EXPECT_EQ(cat("d/a"), "new bytes of a");
  EXPECT_EQ(cat("d/b"), "old bytes of a");
  EXPECT_EQ(cat("d/c"), "second c");
  EXPECT_EQ(cat("d/keep"), "kept");

  // Without a replacement, one pass.
  ImageSpec plain;
  plain.tag = "plain:1";
  plain.layer().dir("/d").file("/d/a", "a").hardlink("/d/b", "/d/a").file("/d/c", "c");
  inspect::testing::write_docker_archive(plain, tmp / "plain.tar");
  o.source = "docker-archive:" + tmp / "plain.tar";
  o.output = tmp / "plain.sqsh";
  ImportResult p = import_image(o);
  EXPECT_EQ(p.passes, 1u);
  EXPECT_EQ(sh("unsquashfs -cat " + tmp / "plain.sqsh" + " d/b").out, "a");
  // Only the final versions' bytes were written ("first c" is not stored):
  // both images get the same generated files (enroot's /etc/rc…) besides.
  const uint64_t generated = p.input_bytes - 2;
  EXPECT_EQ(r.input_bytes, generated + std::string("new bytes of aold bytes of asecond ckept").size());
}

// A single pass forgets each file once written (one tree in memory, not
// two); a later member that replaces the directory holding written files
// must still throw that pass away, and the files must not survive.
TEST(ImportOnePass, AWrittenFilesDirectoryReplacedLaterFallsBackToTwoPasses) {
  TempDir tmp;
  ImageSpec img;
  img.tag = "dirgone:1";
  img.layer().dir("/x").file("/x/f", "gone").dir("/y").file("/y/g", "kept").symlink("/x", "/y");
  inspect::testing::write_docker_archive(img, tmp / "img.tar");
  ImportOptions o;
  o.source = "docker-archive:" + tmp / "img.tar";
  o.output = tmp / "img.sqsh";
  o.inspect = false;
  ImportResult r = import_image(o);
  EXPECT_EQ(r.passes, 2u);
  auto ls = sh("unsquashfs -lls " + tmp / "img.sqsh" + " x y");
  EXPECT_NE(ls.out.find("squashfs-root/x -> /y"), std::string::npos) << ls.out;
  EXPECT_EQ(ls.out.find("x/f"), std::string::npos) << ls.out;
  EXPECT_EQ(sh("unsquashfs -cat " + tmp / "img.sqsh" + " y/g").out, "kept");
}

// enroot cannot write its /etc/rc into a directory (its import fails) nor
// into a FIFO (it blocks): refused, naming the path, nothing published;
// replacing it would drop what the image holds there.
TEST(ImportEnrootFiles, ADirectoryWhereEnrootWritesItsFileIsRefused) {
  TempDir tmp;
  ImageSpec img;
  img.tag = "etcdir:1";
  img.layer().dir("/etc").dir("/etc/rc").file("/etc/rc/sub", "kept by nobody");
  inspect::testing::write_docker_archive(img, tmp / "img.tar");
  ImportOptions o;
  o.source = "docker-archive:" + tmp / "img.tar";
  o.output = tmp / "img.sqsh";
  o.inspect = false;
  try {
    import_image(o);
    FAIL() << "imported";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()),
              o.source +
                  ": /etc/rc is a directory in the image: enroot writes its /etc/rc there (enroot import "
                  "fails on it)");
  }
  EXPECT_FALSE(fs::exists(o.output));
  EXPECT_FALSE(fs::exists(o.output + ".json"));
}

TEST(ImportPublish, FullFileSystemLeavesNothingAndSaysSo) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to mount a small tmpfs";
  TempDir tmp;
  std::string mnt = tmp / "small";
  fs::create_directories(mnt);
  if (::mount("tmpfs", mnt.c_str(), "tmpfs", 0, "size=1m") != 0) GTEST_SKIP() << "cannot mount tmpfs here";
  struct Unmount {
    std::string p;
    ~Unmount() { ::umount2(p.c_str(), MNT_DETACH); }
  } unmount{mnt};
  fs::create_directories(tmp / "root");
  sh("head -c 4000000 /dev/urandom > " + tmp / "root/random.bin");
  ImportOptions o;
  o.source = "dir:" + tmp / "root";
  o.output = mnt + "/img.sqsh";
  try {
    import_image(o);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(e.diagnostic().message.find("No space left on device"), std::string::npos) << e.what();
    EXPECT_EQ(e.diagnostic().hint, "the file system of the output is full (" + mnt +
                                       "); nothing was published and the partial file was removed");
  }
  EXPECT_TRUE(fs::is_empty(mnt));
}

TEST(ImportPublish, SigintMidImportLeavesNothingAndExitsWithTheSignal) {
  TempDir tmp;
  fs::create_directories(tmp / "root");
  sh("for i in $(seq 1 64); do head -c 4000000 /dev/urandom > " + tmp / "root" + "/f$i; done");
  std::string out = tmp / "out";
  fs::create_directories(out);
  pid_t pid = ::fork();
  if (pid == 0) {
    ImportOptions o;
    o.source = "dir:" + tmp / "root";
    o.output = out + "/img.sqsh";
    o.compressor = sqsh::Compressor::Xz;  // slow on purpose: the signal must land mid-import
    try {
      import_image(o);
    } catch (const Interrupted& e) {
      _exit(128 + e.signal_number());
    } catch (...) {
      _exit(3);
    }
    _exit(0);
  }
  // Wait until the import holds its partial output (an O_TMPFILE inode in
  // out/, or a named partial file there), then interrupt.
  auto writing = [&] {
    std::error_code ec;
    for (const auto& fd : fs::directory_iterator("/proc/" + std::to_string(pid) + "/fd", ec)) {
      std::string to = fs::read_symlink(fd.path(), ec).string();
      if (!ec && to.rfind(out + "/", 0) == 0) return true;
    }
    return false;
  };
  for (int i = 0; i < 500 && !writing(); ++i) ::usleep(10000);
  ::usleep(200000);
  ::kill(pid, SIGINT);
  int st = 0;
  ::waitpid(pid, &st, 0);
  ASSERT_TRUE(WIFEXITED(st));
  EXPECT_EQ(WEXITSTATUS(st), 128 + SIGINT);
  EXPECT_TRUE(fs::is_empty(out));
}

}  // namespace
}  // namespace trainimg::builder
