// SPDX-License-Identifier: GPL-3.0-or-later
// The squashfs ImageSource on a real enroot-layout image: made by the real
// mksquashfs with enroot's options (-all-root -comp lzo -noD), holding the
// /etc/environment, /etc/rc and /etc/fstab that enroot's docker::configure
// writes (format copied from enroot 3.4 src/docker.sh, written by the test).
#include "inspect/sources/sqsh_source.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "common/error.h"
#include "common/fd.h"
#include "inspect/inspect.h"
#include "inspect/tree.h"

namespace trainimg::inspect {
namespace {

const char kRc[] =
    "# com.nvidia.build.id 12345\n"
    "# maintainer NVIDIA CORPORATION <cudatools@nvidia.com>\n"
    "\n"
    "mkdir -p \"/workspace\" 2> /dev/null\n"
    "cd \"/workspace\" && unset OLDPWD || exit 1\n"
    "\n"
    "if [ -s /etc/rc.local ]; then\n"
    "    . /etc/rc.local\n"
    "fi\n"
    "\n"
    "if [ $# -gt 0 ]; then\n"
    "    exec '/opt/nvidia/nvidia_entrypoint.sh' \"$@\"\n"
    "else\n"
    "    exec '/opt/nvidia/nvidia_entrypoint.sh' '/bin/bash' '-c' 'echo it'\\''s'\n"
    "fi\n";

class SqshSourceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/sqsh-source-XXXXXX";
    ASSERT_TRUE(::mkdtemp(tmpl));
    dir_ = tmpl;
    std::string root = dir_ + "/root";
    std::filesystem::create_directories(root + "/etc");
    std::filesystem::create_directories(root + "/opt/amazon/efa/lib");
    write(root + "/etc/environment",
          "PATH=/usr/local/nvidia/bin:/usr/bin\nLD_LIBRARY_PATH=/opt/amazon/efa/lib\n");
    write(root + "/etc/rc", kRc);
    write(root + "/etc/fstab", "${ENROOT_ROOTFS}/data /data none x-create=dir,bind,rw,nosuid,nodev\n");
    write(root + "/opt/amazon/efa/lib/libfabric.so.1", "ELF-ish bytes");
    ::link((root + "/opt/amazon/efa/lib/libfabric.so.1").c_str(),
           (root + "/opt/amazon/efa/lib/zz-link").c_str());
    image_ = dir_ + "/img.sqsh";
    std::string cmd =
        "mksquashfs " + root + " " + image_ + " -all-root -comp lzo -noD -noappend -quiet >/dev/null";
    ASSERT_EQ(std::system(cmd.c_str()), 0);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  static void write(const std::string& p, const std::string& s) { std::ofstream(p) << s; }

  std::string dir_, image_;
};

TEST_F(SqshSourceTest, DescribeReadsWhatEnrootRecorded) {
  auto src = open_sqsh_source(image_);
  ImageDescription d = src->describe();
  EXPECT_EQ(d.kind, "sqsh");
  EXPECT_EQ(d.reference, image_);
  EXPECT_EQ(d.layers, std::vector<std::string>{"squashfs"});
  EXPECT_FALSE(d.has_config);
  EXPECT_EQ(d.config.env, (std::vector<std::string>{"PATH=/usr/local/nvidia/bin:/usr/bin",
                                                    "LD_LIBRARY_PATH=/opt/amazon/efa/lib"}));
  EXPECT_EQ(d.config.workdir, "/workspace");
  EXPECT_EQ(d.config.labels.at("com.nvidia.build.id"), "12345");
  EXPECT_EQ(d.config.labels.at("maintainer"), "NVIDIA CORPORATION <cudatools@nvidia.com>");
  EXPECT_EQ(d.config.entrypoint, std::vector<std::string>{"/opt/nvidia/nvidia_entrypoint.sh"});
  EXPECT_EQ(d.config.cmd, (std::vector<std::string>{"/bin/bash", "-c", "echo it's"}));
  EXPECT_EQ(d.config.volumes, std::vector<std::string>{"/data"});
}

TEST_F(SqshSourceTest, WalkYieldsOneSquashfsLayerWithContentOnDemand) {
  struct V : LayerVisitor {
    void begin_layer(const std::string& id, size_t i) override {
      layers.push_back(id + "#" + std::to_string(i));
    }
    bool entry(const Entry& e) override {
      entries[e.path] = e;
      return e.path == "/opt/amazon/efa/lib/libfabric.so.1";
    }
    void content(const Entry& e, ContentReader& r) override {
      char buf[64];
      size_t n = r.read(buf, sizeof buf);
      data[e.path] = std::string(buf, n);
    }
    std::vector<std::string> layers;
    std::map<std::string, Entry> entries;
    std::map<std::string, std::string> data;
  } v;
  open_sqsh_source(image_)->walk(v);
  EXPECT_EQ(v.layers, std::vector<std::string>{"squashfs#0"});
  EXPECT_EQ(v.entries.at("/").type, EntryType::Dir);
  EXPECT_EQ(v.entries.at("/etc/rc").layer, "squashfs");
  EXPECT_EQ(v.entries.at("/opt/amazon/efa/lib/zz-link").type, EntryType::Hardlink);
  EXPECT_EQ(v.entries.at("/opt/amazon/efa/lib/zz-link").link_target, "/opt/amazon/efa/lib/libfabric.so.1");
  EXPECT_EQ(v.data,
            (std::map<std::string, std::string>{{"/opt/amazon/efa/lib/libfabric.so.1", "ELF-ish bytes"}}));
}

// A .sqsh is random access: the merged view keeps no entry from the walk
// and lists a directory only when a query reaches it, answering exactly as
// a tree built from the walk would (hard links named as the walk names them).
TEST_F(SqshSourceTest, MergedViewListsOnlyTheDirectoriesQueriesReach) {
  auto src = open_sqsh_source(image_);
  ASSERT_NE(src->lister(), nullptr);
  MergedTree t = build_tree(
      *src, [](const Entry& e) { return e.path == "/etc/rc"; },
      [](const Entry&, ContentReader&) { return nlohmann::json("captured"); }, {"libfabric.so.1"});
  EXPECT_EQ(t.size(), 1u);  // the root only: nothing kept per entry
  EXPECT_EQ(t.captured.at("/etc/rc"), "captured");
  EXPECT_EQ(t.lookup("/opt/amazon/efa/lib/zz-link")->type, EntryType::Hardlink);
  EXPECT_EQ(t.lookup("/opt/amazon/efa/lib/zz-link")->link_target, "/opt/amazon/efa/lib/libfabric.so.1");
  EXPECT_EQ(t.resolve("/opt/amazon/efa/lib/zz-link"), "/opt/amazon/efa/lib/libfabric.so.1");
  EXPECT_EQ(t.lookup("/opt/amazon/efa/lib/libfabric.so.1")->layer, "squashfs");
  EXPECT_FALSE(t.lookup("/etc/missing"));
  const size_t listed = t.size();  // /, /opt, /opt/amazon, /opt/amazon/efa, its lib, /etc
  EXPECT_LT(listed, 16u);
  EXPECT_EQ(t.find_named("libfabric.so.1"), std::vector<std::string>{"/opt/amazon/efa/lib/libfabric.so.1"});
  EXPECT_THROW(t.find_named("mpirun"), std::logic_error);  // not remembered: never a silent empty answer
  EXPECT_EQ(t.children("/etc"), (std::vector<std::string>{"/etc/environment", "/etc/fstab", "/etc/rc"}));
  const auto all = t.paths();  // lists every directory
  EXPECT_EQ(all.size(), t.size());
  EXPECT_EQ(all.front(), "/");
}

// An image open on a file descriptor (import's partial file, not yet
// published under its name) reads as the same image by path does, under the
// name given; the inspection of it gives the same report.
TEST_F(SqshSourceTest, AnImageOpenOnADescriptorReadsAsItsPathDoes) {
  UniqueFd fd(::open(image_.c_str(), O_RDONLY | O_CLOEXEC));
  ASSERT_TRUE(fd);
  auto by_fd = open_sqsh_source(fd.get(), "out.sqsh");
  ImageDescription d = by_fd->describe();
  EXPECT_EQ(d.reference, "out.sqsh");
  EXPECT_EQ(d.config.workdir, "/workspace");
  Report a = inspect_sqsh(fd.get(), "out.sqsh", ImageExpectations{});
  Report b = inspect_image("sqsh:" + image_, ImageExpectations{});
  EXPECT_EQ(a.inputs, std::vector<std::string>{"out.sqsh"});
  EXPECT_EQ(a.facts["image"]["reference"], "out.sqsh");
  b.facts["image"]["reference"] = "out.sqsh";  // the one difference
  EXPECT_EQ(a.facts.dump(), b.facts.dump());
  ASSERT_EQ(a.findings.size(), b.findings.size());
  for (size_t i = 0; i < a.findings.size(); ++i) EXPECT_EQ(a.findings[i].rule_id, b.findings[i].rule_id);
  EXPECT_FALSE(a.facts.empty());
  // A descriptor that is not a squashfs: the error names what was given.
  UniqueFd text(::open((dir_ + "/root/etc/rc").c_str(), O_RDONLY | O_CLOEXEC));
  ASSERT_TRUE(text);
  try {
    open_sqsh_source(text.get(), "partial of out.sqsh");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.diagnostic().file, "partial of out.sqsh");
  }
}

TEST_F(SqshSourceTest, NotASquashfsIsAClearError) {
  std::string junk;
  for (int i = 0; i < 20; ++i) junk += "not an image ";
  write(dir_ + "/junk.sqsh", junk);
  try {
    open_sqsh_source(dir_ + "/junk.sqsh");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()),
              dir_ + "/junk.sqsh: not a squashfs image: no \"hsqs\" magic at offset 0");
  }
}

TEST(EnrootConfig, MissingFilesGiveAnEmptyConfigAndShellWordsSplit) {
  ImageConfig c = parse_enroot_config("", "", "");
  EXPECT_TRUE(c.env.empty());
  EXPECT_TRUE(c.entrypoint.empty());
  EXPECT_EQ(split_shell_words("exec 'a b' \"c\\\"d\" $'e\\tf' g\\ h"),
            (std::vector<std::string>{"exec", "a b", "c\"d", "e\tf", "g h"}));
  // No entrypoint: enroot writes `exec "$@"` and `exec CMD...` (/bin/sh default).
  c = parse_enroot_config("", "if [ $# -gt 0 ]; then\n    exec  \"$@\"\nelse\n    exec '/bin/sh'\nfi\n", "");
  EXPECT_TRUE(c.entrypoint.empty());
  EXPECT_EQ(c.cmd, std::vector<std::string>{"/bin/sh"});
}

}  // namespace
}  // namespace trainimg::inspect
