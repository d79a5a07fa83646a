// SPDX-License-Identifier: GPL-3.0-or-later
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "common/error.h"
#include "recipes/recipes.h"

namespace trainimg::recipes {
namespace {
using ::testing::ElementsAre;
using ::testing::IsEmpty;

namespace fs = std::filesystem;

// A scratch build context with `files` (relative path -> text).
class Context {
 public:
  Context(std::initializer_list<std::pair<std::string, std::string>> files)
      : dir_(fs::temp_directory_path() /
             ("trainimg_include_" + std::to_string(::getpid()) + "_" + std::to_string(++count_))) {
    for (const auto& [path, text] : files) {
      fs::create_directories((dir_ / path).parent_path());
      std::ofstream(dir_ / path) << text;
    }
  }
  ~Context() { fs::remove_all(dir_); }
  std::string path(const std::string& p) const { return p.empty() ? dir_.string() : (dir_ / p).string(); }

 private:
  static inline int count_ = 0;
  fs::path dir_;
};

// "file:line:col severity [rule] " of every finding, file relative to `c`.
std::vector<std::string> where(const std::vector<Diagnostic>& ds, const Context& c) {
  std::vector<std::string> out;
  for (const auto& d : ds) {
    std::string file = fs::path(d.file).lexically_relative(c.path("")).string();
    out.push_back(file + ":" + std::to_string(d.line) + ":" + std::to_string(d.column) + " " +
                  std::string(to_string(d.severity)) + (d.rule_id.empty() ? "" : " [" + d.rule_id + "]"));
  }
  return out;
}

const std::string kCommon =
    "FROM nvcr.io/nvidia/pytorch:26.08-py3\n"
    "ARG EFA_INSTALLER_VERSION=1.50.0\n"
    "RUN curl -O https://efa-installer.amazonaws.com/aws-efa-installer-${EFA_INSTALLER_VERSION}.tar.gz\n"
    "RUN apt-get update && cd /tmp/aws-efa-installer && ./efa_installer.sh -y -g --skip-kmod "
    "--skip-limit-conf\n";

const std::string kMain =
    "# syntax = edrevo/dockerfile-plus\n"
    "INCLUDE+ base/Dockerfile.common\n"
    "ENV LD_LIBRARY_PATH=/opt/amazon/efa/lib:${LD_LIBRARY_PATH}\n"
    "ENV NCCL_NET_PLUGIN=none\n";

// Issue 25: the included file (which holds the FROM) is read in place; each
// finding is positioned in the file it is about.
TEST(Include, IncludedFileIsReadInPlaceAndFindingsPointIntoIt) {
  Context c({{"Dockerfile", kMain}, {"base/Dockerfile.common", kCommon}});
  LintedFile r = lint_dockerfile_file(SourceFile::read(c.path("Dockerfile")), {});
  EXPECT_THAT(where(r.findings, c), ElementsAre("Dockerfile:3:21 error [efa-ld-library-path]",
                                                "Dockerfile:4:21 error [nccl-net-plugin]",
                                                "base/Dockerfile.common:4:52 error [efa-container-flags]"));
  EXPECT_THAT(r.notes, IsEmpty());
  // The NGC base of the included file counts: the hint says it sets ofi.
  EXPECT_EQ(r.findings[1].hint,
            "remove the ENV (the NGC base sets NCCL_NET_PLUGIN=ofi) or set NCCL_NET_PLUGIN=ofi");
  EXPECT_EQ(r.findings[2].source_line,
            "RUN apt-get update && cd /tmp/aws-efa-installer && ./efa_installer.sh -y -g --skip-kmod "
            "--skip-limit-conf");
}

// Not in the Dockerfile's directory but in the --context directory.
TEST(Include, IncludedFileIsLookedUpInTheContextToo) {
  Context files({{"ctx/base/Dockerfile.common", kCommon}, {"df/Dockerfile", kMain}});
  LintOptions opt;
  opt.contexts = {files.path("ctx")};
  LintedFile r = lint_dockerfile_file(SourceFile::read(files.path("df/Dockerfile")), opt);
  EXPECT_THAT(where(r.findings, files),
              ElementsAre("ctx/base/Dockerfile.common:4:52 error [efa-container-flags]",
                          "df/Dockerfile:3:21 error [efa-ld-library-path]",
                          "df/Dockerfile:4:21 error [nccl-net-plugin]"));
}

// A file that is not there: never a refusal (the frontend decides); a
// positioned remark, and what follows is linted on an unknown base.
TEST(Include, MissingIncludedFileIsARemarkNotARefusal) {
  Context c({{"Dockerfile", kMain}});
  LintedFile r = lint_dockerfile_file(SourceFile::read(c.path("Dockerfile")), {});
  EXPECT_THAT(where(r.findings, c), ElementsAre("Dockerfile:4:21 error [nccl-net-plugin]"));
  EXPECT_EQ(r.findings[0].hint, "set NCCL_NET_PLUGIN=ofi");
  EXPECT_THAT(where(r.notes, c), ElementsAre("Dockerfile:2:1 info", "Dockerfile:3:1 info"));
  EXPECT_EQ(r.notes[0].message,
            "INCLUDE+ base/Dockerfile.common: no file 'base/Dockerfile.common' in the build context (" +
                c.path("") +
                "): cannot tell what it holds (FROM, ARG, ENV, RUN); the rest is linted without it");
}

// An error inside the included file is positioned there.
TEST(Include, ErrorInTheIncludedFileIsPositionedThere) {
  Context c({{"Dockerfile", kMain}, {"base/Dockerfile.common", "FROM x\nRUN a\nENV A\n"}});
  try {
    lint_dockerfile_file(SourceFile::read(c.path("Dockerfile")), {});
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.diagnostic().file, c.path("base/Dockerfile.common"));
    EXPECT_EQ(e.diagnostic().line, 3);
    EXPECT_EQ(e.diagnostic().column, 5);
    EXPECT_EQ(e.diagnostic().message, "ENV A has no value");
  }
}

// A file that includes itself is read once.
TEST(Include, FileIncludingItselfIsReadOnce) {
  Context c({{"Dockerfile", "# syntax = edrevo/dockerfile-plus\nFROM ubuntu:24.04\nINCLUDE+ Dockerfile\n"}});
  LintedFile r = lint_dockerfile_file(SourceFile::read(c.path("Dockerfile")), {});
  EXPECT_THAT(r.findings, IsEmpty());
  ASSERT_EQ(r.notes.size(), 1u);
  EXPECT_EQ(
      r.notes[0].message,
      "INCLUDE+ Dockerfile: 'Dockerfile' includes itself: cannot tell what it holds (FROM, ARG, ENV, RUN); "
      "the rest is linted without it");
}

}  // namespace
}  // namespace trainimg::recipes
