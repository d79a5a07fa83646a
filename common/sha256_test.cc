// SPDX-License-Identifier: GPL-3.0-or-later
#include "common/sha256.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <string>

#include "common/error.h"
#include "common/fd.h"

namespace trainimg {
namespace {

// FIPS 180-2 test vectors.
const char* kEmpty = "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
const char* kAbc = "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";

TEST(Sha256, KnownVectors) {
  EXPECT_EQ(sha256_digest(""), kEmpty);
  EXPECT_EQ(sha256_digest("abc"), kAbc);
}

TEST(Sha256, PiecewiseEqualsWhole) {
  Sha256 h;
  h.update("a");
  h.update(std::string_view("bc"));
  EXPECT_EQ(h.digest(), kAbc);
}

TEST(Sha256, FileIsReadWhole) {
  char path[] = "/tmp/trainimg-sha256-XXXXXX";
  int fd = ::mkstemp(path);
  ASSERT_GE(fd, 0);
  ::close(fd);
  std::string big(3 << 20, 'x');  // more than one read buffer
  std::ofstream(path) << "abc";
  EXPECT_EQ(sha256_file(path), kAbc);
  std::ofstream(path) << big;
  EXPECT_EQ(sha256_file(path), sha256_digest(big));
  {  // by descriptor: from the start whatever its offset, which stays put
    UniqueFd at(::open(path, O_RDONLY | O_CLOEXEC));
    ASSERT_TRUE(at);
    ASSERT_EQ(::lseek(at.get(), 5, SEEK_SET), 5);
    EXPECT_EQ(sha256_fd(at.get(), path), sha256_digest(big));
    EXPECT_EQ(::lseek(at.get(), 0, SEEK_CUR), 5);
  }
  ::unlink(path);
  try {
    sha256_file(path);
    FAIL() << "a missing file was digested";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
  }
}

TEST(Sha256, OnlyLowercaseFullLengthDigestsAreAccepted) {
  EXPECT_TRUE(is_sha256_digest(kAbc));
  EXPECT_FALSE(is_sha256_digest("sha256:BA7816BF8F01CFEA414140DE5DAE2223B00361A396177A9CB410FF61F20015AD"));
  EXPECT_FALSE(is_sha256_digest(std::string(kAbc).substr(0, 70)));
  EXPECT_FALSE(is_sha256_digest(std::string(kAbc) + "0"));
  EXPECT_FALSE(is_sha256_digest("sha256:../../etc/passwd"));
  EXPECT_FALSE(is_sha256_digest("sha512:" + std::string(64, 'a')));
}

}  // namespace
}  // namespace trainimg
