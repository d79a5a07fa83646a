// SPDX-License-Identifier: GPL-3.0-or-later
// The context tar is read back with libarchive and compared entry by entry.
#include "builder/context.h"

#include <archive.h>
#include <archive_entry.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>

#include "common/error.h"

namespace trainimg::builder {
namespace {
namespace fs = std::filesystem;

class ContextTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("trainimg-ctx-" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  void write(const std::string& rel, const std::string& text) {
    fs::create_directories((dir_ / rel).parent_path());
    std::ofstream(dir_ / rel, std::ios::binary) << text;
  }

  struct Got {
    char type;  // f, d, l (symlink), h (hard link)
    std::string content_or_target;
  };
  // Drains the stream in odd-sized reads and lists the tar's entries.
  std::map<std::string, Got> read_back(ContextStream& s, size_t chunk = 777) {
    std::string tar;
    std::string buf(chunk, '\0');
    while (size_t n = s.read(buf.data(), buf.size())) tar.append(buf.data(), n);
    EXPECT_EQ(tar.size(), s.bytes());
    std::map<std::string, Got> out;
    archive* a = archive_read_new();
    archive_read_support_format_tar(a);
    EXPECT_EQ(archive_read_open_memory(a, tar.data(), tar.size()), ARCHIVE_OK);
    archive_entry* e;
    while (archive_read_next_header(a, &e) == ARCHIVE_OK) {
      Got g{'f', {}};
      EXPECT_EQ(archive_entry_uid(e), 0);
      if (archive_entry_hardlink(e)) {
        g = {'h', archive_entry_hardlink(e)};
      } else if (archive_entry_filetype(e) == AE_IFDIR) {
        g.type = 'd';
      } else if (archive_entry_filetype(e) == AE_IFLNK) {
        g = {'l', archive_entry_symlink(e)};
      } else {
        std::string data(size_t(archive_entry_size(e)), '\0');
        archive_read_data(a, data.data(), data.size());
        g.content_or_target = data;
      }
      out[archive_entry_pathname(e)] = g;
    }
    archive_read_free(a);
    return out;
  }
  fs::path dir_;
};

TEST_F(ContextTest, DockerignoreFiltersAndExceptionsReopenDirectories) {
  write("Dockerfile", "FROM x\n");
  write("src/main.cc", "int main() {}\n");
  write("build/out.o", "obj");
  write("docs/a.md", "a");
  write("docs/api/keep.md", "keep");
  write(".git/HEAD", "ref");
  auto ig = DockerIgnore::parse(".dockerignore", "build\n.git\ndocs\n!docs/api/keep.md\n");
  ContextStream s(dir_.string(), ig, {});
  auto got = read_back(s);
  std::vector<std::string> names;
  for (const auto& [k, v] : got) names.push_back(k);
  EXPECT_EQ(names, (std::vector<std::string>{"Dockerfile", "docs/api/keep.md", "src/", "src/main.cc"}));
  EXPECT_EQ(got["docs/api/keep.md"].content_or_target, "keep");
  EXPECT_EQ(s.files(), 4u);
}

TEST_F(ContextTest, SymlinksAreNotFollowedAndHardLinksStayLinks) {
  write("data/big.bin", std::string(300000, 'z'));  // several read chunks
  fs::create_symlink("/etc/passwd", dir_ / "escape");
  fs::create_hard_link(dir_ / "data/big.bin", dir_ / "data/same.bin");
  ContextStream s(dir_.string(), DockerIgnore(), {});
  auto got = read_back(s, 4096);
  EXPECT_EQ(got["escape"].type, 'l');
  EXPECT_EQ(got["escape"].content_or_target, "/etc/passwd");
  EXPECT_EQ(got["data/big.bin"].content_or_target, std::string(300000, 'z'));
  EXPECT_EQ(got["data/same.bin"].type, 'h');
  EXPECT_EQ(got["data/same.bin"].content_or_target, "data/big.bin");
}

TEST_F(ContextTest, InjectedFilesReplaceTheirNamesakes) {
  write(".dockerignore", "secret\n");
  write("secret", "s");
  ContextStream s(dir_.string(), DockerIgnore::parse(".dockerignore", "secret\n"),
                  {{".trainimg-dockerfile-1", "FROM y\n"}, {".dockerignore", "secret\n.trainimg-dockerfile-1\n"}});
  auto got = read_back(s);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[".dockerignore"].content_or_target, "secret\n.trainimg-dockerfile-1\n");
  EXPECT_EQ(got[".trainimg-dockerfile-1"].content_or_target, "FROM y\n");
}

TEST_F(ContextTest, MissingContextIsAnError) {
  try {
    ContextStream s((dir_ / "nope").string(), DockerIgnore(), {});
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("cannot open the build context: No such file or directory"),
              std::string::npos)
        << e.what();
  }
}

TEST(InjectedDockerfileName, IsStableAndContentDerived) {
  EXPECT_EQ(injected_dockerfile_name("FROM x\n"), injected_dockerfile_name("FROM x\n"));
  EXPECT_NE(injected_dockerfile_name("FROM x\n"), injected_dockerfile_name("FROM y\n"));
  EXPECT_EQ(injected_dockerfile_name("").size(), std::string(".trainimg-dockerfile-").size() + 16);
}

}  // namespace
}  // namespace trainimg::builder
