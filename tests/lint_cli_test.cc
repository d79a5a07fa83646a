// SPDX-License-Identifier: GPL-3.0-or-later
// End-to-end tests of `trainimg lint`: the built binary on the seed's
// Dockerfiles and on tests/golden/lint inputs, compared byte for byte with
// the golden reports (TRAINIMG_UPDATE_GOLDEN=1 rewrites them).
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "tests/cli_test_util.h"

namespace {

using trainimg::testing::slurp;

namespace fs = std::filesystem;

using Result = trainimg::testing::SplitResult;

// Runs `trainimg ARGS` in the source tree (so reports name relative paths).
Result lint(const std::string& args) {
  fs::path tmp = fs::temp_directory_path() / ("trainimg_lint_cli_" + std::to_string(::getpid()));
  fs::create_directories(tmp);
  Result r = trainimg::testing::sh_split(
      std::string("cd '") + TRAINIMG_SOURCE_DIR + "' && NO_COLOR=1 '" + TRAINIMG_BIN + "' lint " + args, tmp);
  fs::remove_all(tmp);
  return r;
}

void expect_golden(const std::string& name, const std::string& actual) {
  fs::path p = fs::path(TRAINIMG_SOURCE_DIR) / "tests/golden/lint" / name;
  if (std::getenv("TRAINIMG_UPDATE_GOLDEN")) {
    std::ofstream(p, std::ios::binary) << actual;
    return;
  }
  EXPECT_EQ(actual, slurp(p)) << "golden " << p
                              << " differs (TRAINIMG_UPDATE_GOLDEN=1 rewrites it; review the diff)";
}

const std::string kPitfalls = "tests/golden/lint/pitfalls.Dockerfile";

TEST(LintCli, SeedDockerfilesLintClean) {
  for (const char* f :
       {"tests/fixtures/seed002/short.Dockerfile", "tests/fixtures/seed002/reference.Dockerfile"}) {
    Result r = lint(std::string(f) + " --fail-on warning --expect efa-installer=1.50.0");
    EXPECT_EQ(r.rc, 0) << f << "\n" << r.out << r.err;
    EXPECT_EQ(r.out, "0 errors, 0 warnings, 0 notes\n");
    EXPECT_EQ(r.err, "");
  }
}

TEST(LintCli, StandardInputIsDash) {
  Result r = lint("- < tests/fixtures/seed002/reference.Dockerfile");
  EXPECT_EQ(r.rc, 0) << r.out << r.err;
  Result bad = lint("--format json - < " + kPitfalls);
  EXPECT_EQ(bad.rc, 1);
  EXPECT_EQ(nlohmann::json::parse(bad.out)["inputs"][0], "<stdin>");
}

TEST(LintCli, TextReportMatchesGolden) {
  Result r = lint(kPitfalls);
  EXPECT_EQ(r.rc, 1);
  EXPECT_EQ(r.err, "");
  expect_golden("pitfalls.txt", r.out);
}

// A fixture of syntax BuildKit accepts (byte-order mark, ARG values a stage
// inherits, LABEL KEY VALUE, a heredoc named END-OF-INSTALL fed to bash,
// comment and blank lines inside a continuation, ONBUILD RUN <<EOF, `\\` at
// the end of a line, exec form that is not JSON): every finding where it
// belongs, in the heredoc body and on the continuation line.
TEST(LintCli, BuildKitSyntaxReportMatchesGolden) {
  Result r = lint("tests/golden/lint/buildkit-syntax.Dockerfile");
  EXPECT_EQ(r.rc, 1);
  EXPECT_EQ(r.err, "");
  expect_golden("buildkit-syntax.txt", r.out);
}

TEST(LintCli, JsonReportIsValidStableAndMatchesGolden) {
  Result r = lint("--format json " + kPitfalls);
  EXPECT_EQ(r.rc, 1);
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["schema"], "trainimg.lint/v1");
  EXPECT_EQ(j["findings"][0]["rule"], "efa-version-pin");
  EXPECT_EQ(r.out, lint("--format json " + kPitfalls).out);  // stable across runs
  expect_golden("pitfalls.json", r.out);
}

TEST(LintCli, SarifReportIsValidAndMatchesGolden) {
  Result r = lint("--format sarif " + kPitfalls);
  EXPECT_EQ(r.rc, 1);
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["version"], "2.1.0");
  const auto& run = j["runs"][0];
  EXPECT_EQ(run["tool"]["driver"]["name"], "trainimg");
  ASSERT_FALSE(run["results"].empty());
  for (const auto& res : run["results"]) {
    EXPECT_TRUE(res.contains("ruleId"));
    EXPECT_GE(res["locations"][0]["physicalLocation"]["region"]["startLine"].get<int>(), 1);
  }
  expect_golden("pitfalls.sarif", r.out);
}

TEST(LintCli, FailOnDecidesTheExitCode) {
  // Only a warning: a missing -g.
  fs::path tmp = fs::temp_directory_path() / ("trainimg_warn_" + std::to_string(::getpid()) + ".Dockerfile");
  std::ofstream(tmp) << "FROM ubuntu:24.04\nRUN apt-get update && ./efa_installer.sh -y -k -l -n\n"
                        "ENV LD_LIBRARY_PATH=/opt/amazon/ofi-nccl/lib:/opt/amazon/efa/lib:$LD_LIBRARY_PATH\n";
  EXPECT_EQ(lint(tmp.string()).rc, 0);
  EXPECT_EQ(lint("--fail-on warning " + tmp.string()).rc, 1);
  EXPECT_EQ(lint("--fail-on never " + kPitfalls).rc, 0);
  fs::remove(tmp);
}

TEST(LintCli, ExpectMismatchIsAnError) {
  Result r = lint("--expect efa-installer=1.49.0 tests/fixtures/seed002/short.Dockerfile");
  EXPECT_EQ(r.rc, 1);
  EXPECT_NE(
      r.out.find(
          "tests/fixtures/seed002/short.Dockerfile:6:19: error: the image installs EFA installer 1.50.0 "
          "but the host has 1.49.0 [efa-version-pin]"),
      std::string::npos)
      << r.out;
}

TEST(LintCli, MalformedDockerfileExitsTwoWithAPositionedMessageAndNoReport) {
  fs::path tmp = fs::temp_directory_path() / ("trainimg_bad_" + std::to_string(::getpid()) + ".Dockerfile");
  std::ofstream(tmp) << "FROM x\nRUN apt-get update\n && ./efa_installer.sh -y\n";
  Result r = lint("tests/fixtures/seed002/short.Dockerfile " + tmp.string());
  EXPECT_EQ(r.rc, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err.substr(0, r.err.find('\n')), tmp.string() + ":3:2: error: unknown instruction '&&'");
  fs::remove(tmp);
}

// Issue 25: a CI that parses the structured report gets one with a refused
// file too: the refusal is a positioned error finding (dockerfile-syntax),
// the other inputs are linted, the exit code stays 2. (Before, stdout was
// empty: this test asserted that for --format json.)
TEST(LintCli, StructuredReportCarriesTheRefusalAsAPositionedFinding) {
  fs::path tmp = fs::temp_directory_path() / ("trainimg_bad_" + std::to_string(::getpid()) + ".Dockerfile");
  std::ofstream(tmp) << "FROM x\nRUN apt-get update\n && ./efa_installer.sh -y\n";
  Result r = lint("--format json tests/fixtures/seed002/short.Dockerfile " + tmp.string());
  EXPECT_EQ(r.rc, 2) << r.out << r.err;
  EXPECT_EQ(r.err.substr(0, r.err.find('\n')), tmp.string() + ":3:2: error: unknown instruction '&&'");
  auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["findings"].size(), 1u) << r.out;
  EXPECT_EQ(j["findings"][0]["rule"], "dockerfile-syntax");
  EXPECT_EQ(j["findings"][0]["severity"], "error");
  EXPECT_EQ(j["findings"][0]["file"], tmp.string());
  EXPECT_EQ(j["findings"][0]["line"], 3);
  EXPECT_EQ(j["findings"][0]["column"], 2);
  EXPECT_EQ(j["findings"][0]["message"], "unknown instruction '&&'");
  Result sarif = lint("--format sarif " + tmp.string());
  EXPECT_EQ(sarif.rc, 2);
  auto run = nlohmann::json::parse(sarif.out)["runs"][0];
  ASSERT_EQ(run["results"].size(), 1u) << sarif.out;
  EXPECT_EQ(run["results"][0]["ruleId"], "dockerfile-syntax");
  EXPECT_EQ(run["results"][0]["locations"][0]["physicalLocation"]["region"]["startLine"], 3);
  EXPECT_EQ(run["results"][0]["locations"][0]["physicalLocation"]["region"]["startColumn"], 2);
  Result junit = lint("--format junit " + tmp.string());
  EXPECT_EQ(junit.rc, 2);
  EXPECT_NE(junit.out.find("dockerfile-syntax"), std::string::npos) << junit.out;
  fs::remove(tmp);
}

// `lint DIR` walks the tree: Dockerfile, Dockerfile.*, Dockerfile-*,
// Dockerfile_*, *.Dockerfile, *.dockerfile, Containerfile, Containerfile.*,
// but not BuildKit's Dockerfile.dockerignore nor a Dockerfile.md; hidden
// directories skipped; a file that is not a Dockerfile is one positioned
// error while the others are still reported; exit 2.
TEST(LintCli, DirectoryIsWalkedAndARefusedFileDoesNotHideTheOthers) {
  fs::path dir = fs::temp_directory_path() / ("trainimg_lint_dir_" + std::to_string(::getpid()));
  fs::create_directories(dir / "a" / "b");
  fs::create_directories(dir / ".git");
  std::ofstream(dir / "Dockerfile") << "FROM ubuntu:24.04\nENV NCCL_NET_PLUGIN=none\n";
  std::ofstream(dir / "a" / "b" / "train.Dockerfile") << "FROM ubuntu:24.04\nENV NCCL_NET_PLUGIN=\n";
  std::ofstream(dir / "a" / "Dockerfile.k8s") << "apiVersion: v1\nkind: Pod\n";
  std::ofstream(dir / "a" / "notes.txt") << "not linted\n";
  std::ofstream(dir / ".git" / "Dockerfile") << "not linted\n";
  std::ofstream(dir / "Dockerfile.dockerignore") << "*.ckpt\n";
  std::ofstream(dir / "a" / "b" / "train.Dockerfile.dockerignore") << "data/\n";
  std::ofstream(dir / "Dockerfile.md") << "# How to build\n";
  std::ofstream(dir / "a" / "Dockerfile-cuda") << "FROM ubuntu:24.04\nENV NCCL_NET_PLUGIN=none\n";
  std::ofstream(dir / "a" / "Dockerfile_rocm") << "FROM ubuntu:24.04\n";
  std::ofstream(dir / "a" / "Containerfile") << "FROM ubuntu:24.04\n";
  Result r = lint("--format json " + dir.string());
  EXPECT_EQ(r.rc, 2) << r.out << r.err;
  EXPECT_EQ(r.err.substr(0, r.err.find('\n')),
            (dir / "a" / "Dockerfile.k8s").string() + ":1:1: error: unknown instruction 'apiVersion:'");
  // The refused file is a dockerfile-syntax finding of the JSON report (issue 25).
  auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["inputs"].size(), 5u) << r.out;
  EXPECT_EQ(j["inputs"][0], (dir / "Dockerfile").string());
  EXPECT_EQ(j["inputs"][1], (dir / "a" / "Containerfile").string());
  EXPECT_EQ(j["inputs"][2], (dir / "a" / "Dockerfile-cuda").string());
  EXPECT_EQ(j["inputs"][3], (dir / "a" / "Dockerfile_rocm").string());
  EXPECT_EQ(j["inputs"][4], (dir / "a" / "b" / "train.Dockerfile").string());
  ASSERT_EQ(j["findings"].size(), 4u);
  EXPECT_EQ(j["findings"][2]["rule"], "dockerfile-syntax");
  EXPECT_EQ(j["findings"][2]["file"], (dir / "a" / "Dockerfile.k8s").string());
  // Without the refused file the exit code is the findings' again.
  fs::remove(dir / "a" / "Dockerfile.k8s");
  EXPECT_EQ(lint(dir.string()).rc, 1);
  fs::remove_all(dir);
}

// A directory with no Dockerfile in it is a wrong path: exit 2, not a clean run.
TEST(LintCli, ADirectoryWithNoDockerfileIsAnError) {
  fs::path dir = fs::temp_directory_path() / ("trainimg_lint_empty_" + std::to_string(::getpid()));
  fs::create_directories(dir / "sub");
  std::ofstream(dir / "sub" / "notes.txt") << "FROM x\n";
  Result r = lint(dir.string());
  EXPECT_EQ(r.rc, 2) << r.out << r.err;
  EXPECT_EQ(r.err.substr(0, r.err.find('\n')), dir.string() + ": error: no Dockerfile under this directory");
  EXPECT_EQ(r.out, "");
  fs::remove_all(dir);
}

// One root cause, one SARIF result: the other lines are its relatedLocations.
TEST(LintCli, SarifCarriesRelatedLocations) {
  fs::path tmp =
      fs::temp_directory_path() / ("trainimg_related_" + std::to_string(::getpid()) + ".Dockerfile");
  std::ofstream(tmp) << "FROM nvcr.io/nvidia/pytorch:26.08-py3\n"
                        "ENV PATH=/opt/amazon/openmpi/bin:$PATH\n"
                        "ENV OPAL_PREFIX=/opt/amazon/openmpi\n";
  Result r = lint("--format sarif " + tmp.string());
  EXPECT_EQ(r.rc, 1) << r.out << r.err;
  auto results = nlohmann::json::parse(r.out)["runs"][0]["results"];
  ASSERT_EQ(results.size(), 1u) << r.out;
  EXPECT_EQ(results[0]["locations"][0]["physicalLocation"]["region"]["startLine"], 2);
  ASSERT_EQ(results[0]["relatedLocations"].size(), 1u);
  EXPECT_EQ(results[0]["relatedLocations"][0]["physicalLocation"]["region"]["startLine"], 3);
  EXPECT_EQ(results[0]["relatedLocations"][0]["physicalLocation"]["region"]["startColumn"], 17);
  fs::remove(tmp);
}

TEST(LintCli, UnknownInstructionUnderASyntaxDirectiveIsARemark) {
  fs::path tmp =
      fs::temp_directory_path() / ("trainimg_syntax_" + std::to_string(::getpid()) + ".Dockerfile");
  std::ofstream(tmp) << "# syntax = edrevo/dockerfile-plus\nINCLUDE+ base.Dockerfile\nFROM ubuntu:24.04\n";
  Result r = lint(tmp.string());
  EXPECT_EQ(r.rc, 0) << r.out << r.err;
  // INCLUDE+ is read in place (issue 25); base.Dockerfile is not there.
  EXPECT_NE(
      r.out.find("remark: " + tmp.string() + ":2:1: INCLUDE+ base.Dockerfile: no file 'base.Dockerfile'"),
      std::string::npos)
      << r.out;
  fs::remove(tmp);
}

TEST(LintCli, RecipeIsLintedWithPositionsInTheRecipe) {
  Result r = lint("examples/reference.yaml examples/minimal.yaml --fail-on warning");
  EXPECT_EQ(r.rc, 0) << r.out << r.err;
  EXPECT_EQ(r.out, "0 errors, 0 warnings, 0 notes\n");
}

TEST(LintCli, RenderedReferenceRecipePipedIntoLintIsClean) {
  std::string cmd = std::string("cd '") + TRAINIMG_SOURCE_DIR + "' && '" + TRAINIMG_BIN +
                    "' render examples/reference.yaml | NO_COLOR=1 '" + TRAINIMG_BIN +
                    "' lint --fail-on warning - >/dev/null";
  int st = std::system(cmd.c_str());
  EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

TEST(LintCli, UsageErrorsExitTwo) {
  EXPECT_EQ(lint("does/not/exist.Dockerfile").rc, 2);
  EXPECT_EQ(lint("--format xml " + kPitfalls).rc, 2);
  Result r = lint("--expect efa-installer=latest " + kPitfalls);
  EXPECT_EQ(r.rc, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(lint("").rc, 2);  // no FILE
}

// Issue 25: `INCLUDE+ base/Dockerfile.common` holds the FROM; ENV follows.
// Found under --context, it is read in place (no refusal, exit by findings).
TEST(LintCli, IncludedFileIsFoundUnderTheContext) {
  fs::path dir = fs::temp_directory_path() / ("trainimg_include_" + std::to_string(::getpid()));
  fs::create_directories(dir / "ctx" / "base");
  fs::create_directories(dir / "df");
  std::ofstream(dir / "ctx" / "base" / "Dockerfile.common") << "FROM nvcr.io/nvidia/pytorch:26.08-py3\n";
  std::ofstream(dir / "df" / "Dockerfile")
      << "# syntax = edrevo/dockerfile-plus\nINCLUDE+ base/Dockerfile.common\n"
         "ENV NCCL_NET_PLUGIN=none\n";
  Result without = lint((dir / "df" / "Dockerfile").string());
  EXPECT_EQ(without.rc, 1) << without.out << without.err;
  EXPECT_NE(without.out.find("hint: set NCCL_NET_PLUGIN=ofi\n"), std::string::npos) << without.out;
  Result with = lint("--context " + (dir / "ctx").string() + " " + (dir / "df" / "Dockerfile").string());
  EXPECT_EQ(with.rc, 1) << with.out << with.err;
  EXPECT_NE(
      with.out.find((dir / "df" / "Dockerfile").string() + ":3:21: error: NCCL_NET_PLUGIN is set to 'none'"),
      std::string::npos)
      << with.out;
  EXPECT_NE(with.out.find("hint: remove the ENV (the NGC base sets NCCL_NET_PLUGIN=ofi)"), std::string::npos)
      << with.out;
  EXPECT_EQ(with.out.find("remark:"), std::string::npos) << with.out;
  fs::remove_all(dir);
}

}  // namespace
