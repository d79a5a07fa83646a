// SPDX-License-Identifier: GPL-3.0-or-later
// `trainimg render` end to end: the real binary on the shipped examples and
// on broken recipes written to a temporary directory.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "tests/cli_test_util.h"

namespace {

using trainimg::testing::slurp;

namespace fs = std::filesystem;
const std::string kBin = TRAINIMG_BIN;
const std::string kSource = TRAINIMG_SOURCE_DIR;

void write(const fs::path& p, const std::string& text) {
  std::ofstream out(p, std::ios::binary);
  out << text;
}

std::string quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

struct CliResult {
  int rc = -1;
  std::string out;
  std::string err;
};

class RenderCli : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/trainimg-render-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Runs a shell command line (in the source directory, so example paths
  // read as a user types them) and captures both streams.
  CliResult sh(const std::string& cmdline) {
    std::string cmd = "cd " + quote(kSource) + " && (" + cmdline + ") >" + quote((dir_ / "out").string()) +
                      " 2>" + quote((dir_ / "err").string());
    int status = std::system(cmd.c_str());
    CliResult r;
    r.rc = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    r.out = slurp(dir_ / "out");
    r.err = slurp(dir_ / "err");
    return r;
  }
  CliResult trainimg(const std::string& args) { return sh(quote(kBin) + " " + args); }

  // Writes a recipe into the temporary directory and returns its path.
  std::string recipe(const std::string& name, const std::string& text) {
    write(dir_ / name, text);
    return (dir_ / name).string();
  }

  fs::path dir_;
};

const char* kHead = "base: nvcr.io/nvidia/pytorch:26.08-py3\nefa: {installer: 1.50.0}\n";

// Golden files: tests/golden/render/*.Dockerfile; TRAINIMG_UPDATE_GOLDEN=1 rewrites them.
void expect_golden(const std::string& name, const std::string& got) {
  fs::path golden = fs::path(kSource) / "tests/golden/render" / name;
  if (std::getenv("TRAINIMG_UPDATE_GOLDEN")) write(golden, got);
  EXPECT_EQ(got, slurp(golden)) << "golden " << golden << " differs; TRAINIMG_UPDATE_GOLDEN=1 rewrites it";
}

TEST_F(RenderCli, ReferenceRecipeMatchesGolden) {
  CliResult r = trainimg("render examples/reference.yaml");
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.err, "");
  expect_golden("reference.Dockerfile", r.out);
}

TEST_F(RenderCli, MinimalRecipeMatchesGolden) {
  CliResult r = trainimg("render examples/minimal.yaml");
  EXPECT_EQ(r.rc, 0) << r.err;
  expect_golden("minimal.Dockerfile", r.out);
}

TEST_F(RenderCli, SameRecipeRendersByteIdentical) {
  CliResult a = trainimg("render examples/reference.yaml");
  CliResult b = trainimg("render examples/reference.yaml");
  ASSERT_EQ(a.rc, 0);
  EXPECT_EQ(a.out, b.out);
}

TEST_F(RenderCli, OutputFileHoldsWhatStdoutShows) {
  std::string out = (dir_ / "Dockerfile").string();
  CliResult r = trainimg("render examples/reference.yaml -o " + quote(out));
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(slurp(out), trainimg("render examples/reference.yaml").out);
  for (const auto& e : fs::directory_iterator(dir_))  // no partial file left beside it
    EXPECT_EQ(e.path().filename().string().find(".partial-"), std::string::npos) << e.path();
}

TEST_F(RenderCli, SetOverridesTheInstallerVersion) {
  CliResult r = trainimg(
      "render examples/reference.yaml --set efa.installer=1.49.0 --set steps.deepep.env.NCCL_DEBUG=INFO");
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.out.find("# --set efa.installer=1.49.0\n"), std::string::npos);
  EXPECT_NE(r.out.find("\nARG EFA_INSTALLER_VERSION=1.49.0\n"), std::string::npos);
  EXPECT_NE(r.out.find("\nENV NCCL_DEBUG=INFO\n"), std::string::npos);
}

TEST_F(RenderCli, UnknownSetKeyExits2WithASuggestion) {
  std::string out = (dir_ / "Dockerfile").string();
  CliResult r = trainimg("render examples/reference.yaml --set efa.instaler=1.49.0 -o " + quote(out));
  EXPECT_EQ(r.rc, 2);
  EXPECT_EQ(r.err.substr(0, r.err.find('\n')),
            "--set efa.instaler: error: unknown key 'efa.instaler' (did you mean 'efa.installer'?) "
            "[recipe-schema]");
  EXPECT_FALSE(fs::exists(out));
}

TEST_F(RenderCli, MalformedYamlExits2WithPositionAndWritesNothing) {
  std::string path =
      recipe("bad.yaml", "base: nvcr.io/nvidia/pytorch:26.08-py3\nefa: {installer: 1.50.0\napt: [curl]\n");
  std::string out = (dir_ / "Dockerfile").string();
  CliResult r = trainimg("render " + quote(path) + " -o " + quote(out));
  EXPECT_EQ(r.rc, 2);
  EXPECT_EQ(r.err.substr(0, r.err.find('\n')),
            path + ":3:4: error: malformed YAML: end of map flow not found [recipe-syntax]");
  EXPECT_EQ(r.out, "");
  EXPECT_FALSE(fs::exists(out));
}

TEST_F(RenderCli, UnknownKeyExits2WithDidYouMean) {
  std::string path = recipe("r.yaml", std::string(kHead) + "steps:\n  - name: s\n    rn: make\n");
  CliResult r = trainimg("render " + quote(path));
  EXPECT_EQ(r.rc, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_NE(
      r.err.find(path + ":5:5: error: unknown key 'rn' in step 's' (did you mean 'run'?) [recipe-schema]\n"
                        "    rn: make\n"
                        "    ^~\n"),
      std::string::npos)
      << r.err;
}

// Every refusal, with its exact position, through the real binary.
struct Refusal {
  const char* body;
  const char* where;  // "LINE:COL"
  const char* rule;
};

TEST_F(RenderCli, RefusalsExit2AtTheRecipeNode) {
  const Refusal cases[] = {
      {"steps:\n  - name: s\n    env: {NCCL_NET_PLUGIN: socket}\n", "5:28", "nccl-net-plugin"},
      {"steps:\n  - name: s\n    env:\n      NCCL_NET: IB\n", "6:17", "nccl-ib-settings"},
      {"steps:\n  - name: s\n    env:\n      LD_LIBRARY_PATH: "
       "/usr/lib/x86_64-linux-gnu:/opt/amazon/ofi-nccl/lib:/opt/amazon/efa/lib\n",
       "6:24", "efa-ld-library-path"},
      {"apt: [curl, libopenmpi-dev]\n", "3:13", "mpi-second-install"},
      {"steps:\n  - name: s\n    run: |\n      cd /opt\n      /opt/amazon/openmpi/bin/mpicc -o x x.c\n",
       "7:7", "mpi-second-install"},
      {"steps:\n  - name: s\n    env: {OPAL_PREFIX: /opt/amazon/openmpi}\n", "5:24", "mpi-second-install"},
      {"efa2: {}\n", "3:1", "recipe-schema"},
  };
  for (const auto& c : cases) {
    std::string path = recipe("r.yaml", std::string(kHead) + c.body);
    std::string out = (dir_ / "Dockerfile").string();
    CliResult r = trainimg("render " + quote(path) + " -o " + quote(out));
    EXPECT_EQ(r.rc, 2) << c.body;
    std::string want = path + ":" + c.where + ": error: ";
    EXPECT_EQ(r.err.substr(0, want.size()), want) << r.err;
    EXPECT_NE(r.err.find(std::string("[") + c.rule + "]\n"), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(out)) << c.body;
  }
}

TEST_F(RenderCli, InstallerFlagRefusals) {
  std::string path = recipe("r.yaml",
                            "base: nvcr.io/nvidia/pytorch:26.08-py3\n"
                            "efa:\n"
                            "  installer: 1.50.0\n"
                            "  flags: [--uninstall]\n");
  CliResult r = trainimg("render " + quote(path));
  EXPECT_EQ(r.rc, 2);
  EXPECT_EQ(r.err.substr(0, r.err.find('\n')),
            path +
                ":4:11: error: '--uninstall' contradicts a container install of the EFA stack "
                "[recipe-efa-flags]");
}

TEST_F(RenderCli, WarningsArePrintedAndTheDockerfileStillWritten) {
  std::string path = recipe(
      "w.yaml", "base: nvcr.io/nvidia/pytorch:26.08-py3\nefa: {installer: 1.50.0, flags: [--disable-ngc]}\n");
  CliResult r = trainimg("render " + quote(path));
  EXPECT_EQ(r.rc, 0);
  EXPECT_NE(r.err.find(path + ":2:34: warning: --disable-ngc on an NGC base"), std::string::npos) << r.err;
  EXPECT_NE(r.out.find("--no-verify --disable-ngc \\\n"), std::string::npos);
}

TEST_F(RenderCli, MissingRecipeExits2) {
  CliResult r = trainimg("render /nonexistent/recipe.yaml");
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find("/nonexistent/recipe.yaml"), std::string::npos);
}

TEST_F(RenderCli, RenderedReferencePipesIntoLintClean) {
  CliResult r = sh(quote(kBin) + " render examples/reference.yaml | " + quote(kBin) + " lint -");
  EXPECT_EQ(r.rc, 0) << r.out << r.err;
  for (const char* kind : {": error:", ": warning:", ": info:"})
    EXPECT_EQ(r.out.find(kind), std::string::npos) << r.out;
}

TEST_F(RenderCli, LintOnTheRecipeIsClean) {
  CliResult r = trainimg("lint examples/reference.yaml examples/minimal.yaml");
  EXPECT_EQ(r.rc, 0) << r.out << r.err;
}

TEST_F(RenderCli, HelpDescribesTheCommand) {
  CliResult r = trainimg("render --help");
  EXPECT_EQ(r.rc, 0);
  EXPECT_NE(r.out.find("--set"), std::string::npos);
  EXPECT_NE(r.out.find("-o,--output"), std::string::npos);
}

}  // namespace
