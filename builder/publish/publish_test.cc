// SPDX-License-Identifier: GPL-3.0-or-later
#include "builder/publish/publish.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <fstream>

namespace trainimg::builder {
namespace {

namespace fs = std::filesystem;

struct TempDir {
  fs::path path;
  TempDir() {
    char tmpl[] = "/tmp/trainimg-publish-XXXXXX";
    path = mkdtemp(tmpl);
  }
  ~TempDir() { fs::remove_all(path); }
  std::vector<std::string> names() const {
    std::vector<std::string> out;
    for (const auto& e : fs::directory_iterator(path)) out.push_back(e.path().filename().string());
    std::sort(out.begin(), out.end());
    return out;
  }
};

TEST(PartialOutput, RefusesAnExistingTargetWithoutForceBeforeAnyWork) {
  TempDir d;
  std::ofstream(d.path / "img.sqsh") << "old";
  try {
    PartialOutput out((d.path / "img.sqsh").string(), /*replace=*/false);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.diagnostic().message, "output exists");
    EXPECT_EQ(e.diagnostic().hint, "pass --force to replace it atomically");
  }
  EXPECT_EQ(d.names(), (std::vector<std::string>{"img.sqsh"}));
}

TEST(PartialOutput, AbandonedOutputLeavesNothingBehind) {
  TempDir d;
  {
    PartialOutput out((d.path / "img.sqsh").string(), false);
    EXPECT_EQ(out.partial_path(), "");  // an O_TMPFILE inode: never visible
    EXPECT_TRUE(d.names().empty());
  }
  EXPECT_TRUE(d.names().empty());
  {
    PartialOutput out((d.path / "img.sqsh").string(), false, /*named=*/true);
    EXPECT_EQ(fs::path(out.partial_path()).parent_path(), d.path);
    EXPECT_EQ(d.names().size(), 1u);
  }
  EXPECT_TRUE(d.names().empty());
}

TEST(PartialOutput, GarbageFailsTheReadBackAndIsNeverRenamed) {
  TempDir d;
  std::string target = (d.path / "img.sqsh").string();
  try {
    PartialOutput out(target, false);
    out.file().write(std::string(8192, 'x'));
    out.verify_and_commit();
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.diagnostic().file, target);
  }
  EXPECT_TRUE(d.names().empty());
}

TEST(SignalGuard, SigintRemovesThePartialFileAtOnceAndIsReportedAsInterrupted) {
  TempDir d;
  SignalGuard guard;
  // The named partial file (what file systems without O_TMPFILE get).
  PartialOutput out((d.path / "img.sqsh").string(), false, /*named=*/true);
  std::string partial = out.partial_path();
  ASSERT_TRUE(fs::exists(partial));
  std::raise(SIGINT);
  EXPECT_FALSE(fs::exists(partial)) << "the handler itself unlinks";
  EXPECT_EQ(pending_signal(), SIGINT);
  try {
    check_interrupted("dockerd://img");
    FAIL() << "no error";
  } catch (const Interrupted& e) {
    EXPECT_EQ(e.signal_number(), SIGINT);
    EXPECT_EQ(e.diagnostic().message, "interrupted by SIGINT");
  }
  EXPECT_THROW(out.commit(), Interrupted);
  EXPECT_TRUE(d.names().empty());
}

TEST(Sidecar, IsWrittenBesideTheImage) {
  TempDir d;
  std::string img = (d.path / "img.sqsh").string();
  write_sidecar(img, {{"schema", "trainimg.import/v1"}});
  EXPECT_EQ(sidecar_path(img), img + ".json");
  std::ifstream in(img + ".json");
  std::string text((std::istreambuf_iterator<char>(in)), {});
  EXPECT_EQ(text, "{\n  \"schema\": \"trainimg.import/v1\"\n}\n");
  EXPECT_EQ(d.names(), (std::vector<std::string>{"img.sqsh.json"}));
}

TEST(ExplainIoError, FullFileSystemGetsAHint) {
  Error e("/mnt/small/img.sqsh", std::string("write failed: ") + std::strerror(ENOSPC));
  Error x = explain_io_error(e, "/mnt/small/img.sqsh");
  EXPECT_EQ(x.diagnostic().hint,
            "the file system of the output is full (/mnt/small); nothing was published and the partial file "
            "was removed");
  Error other("f", "bad magic");
  EXPECT_EQ(explain_io_error(other, "f").diagnostic().hint, "");
}

}  // namespace
}  // namespace trainimg::builder
