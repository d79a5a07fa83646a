// SPDX-License-Identifier: GPL-3.0-or-later
#include "common/shared_dir.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>

#include "common/error.h"

namespace trainimg {
namespace {

namespace fs = std::filesystem;

struct stat file_of(uid_t uid, mode_t mode) {
  struct stat st {};
  st.st_uid = uid;
  st.st_mode = S_IFREG | mode;
  return st;
}

TEST(Trust, ByDefaultRootTheDirectorysOwnerAndTheCaller) {
  const uid_t me = ::geteuid();
  Trust t = Trust::parse("", "TRAINIMG_PYXIS_CACHE_TRUST", 4242);
  EXPECT_TRUE(t.trusts(0));
  EXPECT_TRUE(t.trusts(4242));
  EXPECT_TRUE(t.trusts(me));
  EXPECT_FALSE(t.trusts(4243));
  EXPECT_TRUE(t.trusts_file(file_of(4242, 0444)));
  EXPECT_FALSE(t.trusts_file(file_of(4242, 0666))) << "others can write it";
  EXPECT_FALSE(t.trusts_file(file_of(4242, 0464))) << "its group can write it";
  EXPECT_FALSE(t.trusts_file(file_of(4243, 0444)));
  struct stat link = file_of(4242, 0444);
  link.st_mode = S_IFLNK | 0777;
  EXPECT_FALSE(t.trusts_file(link));
}

TEST(Trust, TheSiteListReplacesTheDirectorysOwner) {
  Trust t = Trust::parse("uid:5000, gid:0,user:root", "V", 4242);
  EXPECT_TRUE(t.trusts(5000));
  EXPECT_FALSE(t.trusts(4242));
  // group 0: root's primary group; a uid with no passwd entry is in no group.
  EXPECT_FALSE(t.trusts(4243));
  if (::geteuid() != 0) {
    EXPECT_FALSE(t.caller_writes_shared());
    EXPECT_FALSE(Trust::parse("", "V", ::geteuid() + 1).caller_writes_shared());
  }
  EXPECT_TRUE(Trust::parse("", "V", ::geteuid()).caller_writes_shared());
}

TEST(Trust, MalformedOrUnknownNamesAreErrorsNamingTheVariable) {
  for (const char* bad :
       {"root", "user:", "host:x", "uid:abc", "user:no-such-user-trainimg", "group:no-such-grp-x"}) {
    try {
      Trust::parse(bad, "TRAINIMG_PYXIS_CACHE_TRUST", 0);
      ADD_FAILURE() << bad << ": no error";
    } catch (const Error& e) {
      EXPECT_EQ(e.diagnostic().file, "TRAINIMG_PYXIS_CACHE_TRUST") << bad;
    }
  }
}

class SharedDirTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / "trainimg-shared-dir-XXXXXX").string();
    ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
    t_ = tmpl;
  }
  void TearDown() override { fs::remove_all(t_); }
  fs::path t_;
};

TEST_F(SharedDirTest, AWorldWritableDirectoryWithoutTheStickyBitIsRefused) {
  ASSERT_EQ(::chmod(t_.c_str(), 0777), 0);
  try {
    check_shared_dir(t_.string(), "TRAINIMG_PYXIS_CACHE");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(e.diagnostic().message.find("without the sticky bit"), std::string::npos);
    EXPECT_NE(e.diagnostic().hint.find("chmod 1777"), std::string::npos);
  }
  ASSERT_EQ(::chmod(t_.c_str(), 01777), 0);
  EXPECT_NO_THROW(check_shared_dir(t_.string(), "TRAINIMG_PYXIS_CACHE"));
}

TEST_F(SharedDirTest, TheOwnAreaIsTheCallersPrivateDirectory) {
  const std::string area = own_area(t_.string());
  EXPECT_EQ(area, t_.string() + "/user-" + std::to_string(::geteuid()));
  struct stat st {};
  ASSERT_EQ(::stat(area.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  ASSERT_EQ(::chmod(area.c_str(), 0777), 0);
  EXPECT_EQ(own_area(t_.string()), area);  // narrowed again
  ASSERT_EQ(::stat(area.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  EXPECT_EQ(user_areas(t_.string()), std::vector<std::string>{area});
}

TEST_F(SharedDirTest, AnOwnAreaSomeoneElseMadeIsRefused) {
  const std::string area = t_.string() + "/user-" + std::to_string(::geteuid());
  if (::geteuid() != 0) {
    // As a plain user: a symlink planted under the name.
    fs::create_directory_symlink("/tmp", area);
    EXPECT_THROW(own_area(t_.string()), Error);
    return;
  }
  // As root (CI): the directory made by another uid.
  fs::create_directory(area);
  ASSERT_EQ(::chown(area.c_str(), 65534, 65534), 0);
  try {
    own_area(t_.string());
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(e.diagnostic().message.find("belongs to uid 65534, not to you"), std::string::npos)
        << e.diagnostic().message;
  }
}

}  // namespace
}  // namespace trainimg
