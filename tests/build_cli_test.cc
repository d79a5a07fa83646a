// SPDX-License-Identifier: GPL-3.0-or-later
// `trainimg build` end to end against the REAL dockerd (skipped, saying so,
// when /var/run/docker.sock is absent). What stands in for the outside world
// is fake and named so: the FAKE EFA installer tarball
// (tests/fixtures/fake-efa-installer) served from a loopback HTTP server, and
// a FAKE busybox base image with a fake apt-get (imported offline). Builds
// use networkmode=host and reach only 127.0.0.1.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "tests/cli_test_util.h"

namespace {

using trainimg::testing::sh_split;
using trainimg::testing::slurp;

namespace fs = std::filesystem;

const std::string kFixture = std::string(TRAINIMG_SOURCE_DIR) + "/tests/fixtures/fake-efa-installer";

using Result = trainimg::testing::SplitResult;

std::string quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

bool have_daemon() {
  struct stat st;
  return ::stat("/var/run/docker.sock", &st) == 0 && S_ISSOCK(st.st_mode);
}

bool contains(const std::string& hay, const std::string& needle) {
  return hay.find(needle) != std::string::npos;
}

class BuildCli : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (!have_daemon()) return;
    shared_ = fs::temp_directory_path() / ("trainimg-build-cli-" + std::to_string(::getpid()));
    fs::create_directories(shared_ / "www");
    Result base = sh_split(quote(kFixture + "/make_base_image.sh"), shared_);
    ASSERT_EQ(base.rc, 0) << base.err;
    base_ = base.out.substr(0, base.out.find('\n'));
    Result tar = sh_split(
        quote(kFixture + "/make_tarball.sh") + " 1.50.0 " + quote((shared_ / "www").string()), shared_);
    ASSERT_EQ(tar.rc, 0) << tar.err;
    // The loopback server prints its port on its first line.
    int fds[2];
    ASSERT_EQ(::pipe(fds), 0);
    server_ = ::fork();
    if (server_ == 0) {
      ::dup2(fds[1], 1);
      ::close(fds[0]);
      ::execlp("python3", "python3", (kFixture + "/serve.py").c_str(), (shared_ / "www").c_str(), nullptr);
      ::_exit(127);
    }
    ::close(fds[1]);
    std::string port;
    char c;
    while (::read(fds[0], &c, 1) == 1 && c != '\n') port += c;
    ::close(fds[0]);
    ASSERT_FALSE(port.empty()) << "the loopback server did not start";
    url_ = "http://127.0.0.1:" + port;
  }
  static void TearDownTestSuite() {
    if (server_ > 0) {
      ::kill(server_, SIGTERM);
      ::waitpid(server_, nullptr, 0);
    }
    if (!shared_.empty()) fs::remove_all(shared_);
  }
  void SetUp() override {
    if (!have_daemon())
      GTEST_SKIP() << "no Docker daemon at /var/run/docker.sock: real-daemon build tests skipped";
    scratch_ = shared_ / ::testing::UnitTest::GetInstance()->current_test_info()->name();
    ctx_ = scratch_ / "ctx";  // the captured stdout/stderr stay outside it
    fs::create_directories(ctx_);
  }
  void write(const std::string& rel, const std::string& text) {
    fs::create_directories((ctx_ / rel).parent_path());
    std::ofstream(ctx_ / rel, std::ios::binary) << text;
  }
  // Runs the binary from the test's directory, as a user would.
  Result trainimg(const std::string& args, const std::string& env = "") {
    return sh_split("cd " + quote(ctx_.string()) + " && " + env + std::string(TRAINIMG_BIN) + " " + args,
                    scratch_);
  }
  Result in_image(const std::string& image, const std::string& script) {
    return sh_split("docker run --pull never --rm --network none " + image + " sh -c " + quote(script),
                    scratch_);
  }

  // Seed 002's recommended Dockerfile, with the installer URL on loopback.
  std::string seed_dockerfile(
      const std::string& install_flags = "-y -g --skip-kmod --skip-limit-conf --no-verify") {
    return "FROM " + base_ +
           "\n"
           "ARG EFA_INSTALLER_VERSION=1.50.0\n"
           "ARG EFA_URL=" +
           url_ +
           "\n"
           "RUN apt-get update \\\n"
           " && apt-get install -y --no-install-recommends curl ca-certificates git \\\n"
           " && cd /tmp \\\n"
           " && curl -fsSL -O ${EFA_URL}/aws-efa-installer-${EFA_INSTALLER_VERSION}.tar.gz \\\n"
           " && tar -xf aws-efa-installer-${EFA_INSTALLER_VERSION}.tar.gz \\\n"
           " && cd aws-efa-installer \\\n"
           " && ./efa_installer.sh " +
           install_flags +
           " \\\n"
           " && cd / && rm -rf /tmp/aws-efa-installer* /var/lib/apt/lists/*\n"
           "ENV LD_LIBRARY_PATH=/opt/amazon/ofi-nccl/lib:/opt/amazon/efa/lib:${LD_LIBRARY_PATH}\n";
  }

  static inline fs::path shared_;
  static inline std::string base_, url_;
  static inline pid_t server_ = -1;
  fs::path scratch_, ctx_;
};

TEST_F(BuildCli, FakeEfaInstallerSeedDockerfileBuildsAndInstallsTheDocumentedFiles) {
  write("Dockerfile", seed_dockerfile());
  Result r = trainimg("build Dockerfile -t trainimg-test-fake-efa:ok --no-cache --progress tty");
  ASSERT_EQ(r.rc, 0) << r.out << r.err;
  EXPECT_TRUE(contains(r.out, "step 1/5: FROM " + base_ + "\n")) << r.out;
  EXPECT_TRUE(contains(r.out, "step 4/5: RUN apt-get update")) << r.out;
  EXPECT_TRUE(contains(r.out, "  = EFA Installer Version: 1.50.0 =\n")) << r.out;
  EXPECT_TRUE(contains(r.out, "step 5/5: ENV LD_LIBRARY_PATH=")) << r.out;
  std::string last = r.out.substr(r.out.rfind("built "));
  EXPECT_TRUE(last.starts_with("built sha256:")) << last;
  EXPECT_TRUE(last.ends_with(" as trainimg-test-fake-efa:ok\n")) << last;

  Result files =
      in_image("trainimg-test-fake-efa:ok",
               "head -1 /opt/amazon/efa_installed_packages; readlink /opt/amazon/efa/lib/libfabric.so.1; "
               "ls /opt/amazon/ofi-nccl/lib/libnccl-net-ofi.so /opt/amazon/openmpi/bin/mpirun; "
               "test -z \"$(ls /var/lib/apt/lists)\" && echo lists-cleaned; echo $LD_LIBRARY_PATH");
  EXPECT_EQ(files.out,
            "# EFA installer version: 1.50.0\n"
            "libfabric.so.1.26.0\n"
            "/opt/amazon/ofi-nccl/lib/libnccl-net-ofi.so\n"
            "/opt/amazon/openmpi/bin/mpirun\n"
            "lists-cleaned\n"
            "/opt/amazon/ofi-nccl/lib:/opt/amazon/efa/lib:\n")
      << files.err;
}

// Pitfall 1 as the seed tells it: apt-get update (and curl) in an earlier
// RUN whose lists are cleaned, the installer in a later RUN.
std::string split_update_dockerfile(const std::string& base, const std::string& url) {
  return "FROM " + base +
         "\n"
         "ARG EFA_INSTALLER_VERSION=1.50.0\n"
         "RUN apt-get update && apt-get install -y curl ca-certificates git && rm -rf /var/lib/apt/lists/*\n"
         "RUN cd /tmp \\\n"
         " && curl -fsSL -O " +
         url +
         "/aws-efa-installer-${EFA_INSTALLER_VERSION}.tar.gz \\\n"
         " && tar -xf aws-efa-installer-${EFA_INSTALLER_VERSION}.tar.gz \\\n"
         " && cd aws-efa-installer \\\n"
         " && ./efa_installer.sh -y -g --skip-kmod --skip-limit-conf --no-verify\n"
         "ENV LD_LIBRARY_PATH=/opt/amazon/ofi-nccl/lib:/opt/amazon/efa/lib:${LD_LIBRARY_PATH}\n";
}

TEST_F(BuildCli, FakeEfaInstallerWithoutAptUpdateStopsAtLint) {
  write("Dockerfile", split_update_dockerfile(base_, url_));
  Result r = trainimg("build Dockerfile -t trainimg-test-fake-efa:lint");
  EXPECT_EQ(r.rc, 1) << r.out << r.err;
  EXPECT_TRUE(contains(r.err, "[efa-apt-update]")) << r.err;
  EXPECT_TRUE(contains(r.err, "trainimg: lint errors: nothing was built")) << r.err;
  EXPECT_FALSE(contains(r.out, "step 1/")) << r.out;  // nothing reached the daemon
}

TEST_F(BuildCli, FakeEfaInstallerWithoutAptUpdateFailsWithTheSeedTextMappedToItsLine) {
  write("Dockerfile", split_update_dockerfile(base_, url_));
  Result r = trainimg("build Dockerfile --no-lint --progress none");
  EXPECT_EQ(r.rc, 1) << r.out << r.err;
  EXPECT_EQ(r.out, "");
  // The failing step is the installer's RUN, line 4 of the Dockerfile.
  EXPECT_TRUE(
      r.err.starts_with("Dockerfile:4:1: error: step 4/5 failed: The command '/bin/sh -c cd /tmp  && curl "))
      << r.err;
  EXPECT_TRUE(contains(r.err,
                       "returned a non-zero code: 1; the step printed: E: Unable to locate package "
                       "environment-modules [efa-apt-update]\nRUN cd /tmp \\\n^~~\n"))
      << r.err;
  EXPECT_TRUE(contains(r.err,
                       "hint: the apt package lists were empty when efa_installer.sh ran: run `apt-get "
                       "update` earlier in the SAME RUN"))
      << r.err;
}

TEST_F(BuildCli, FakeEfaInstallerWithoutSkipKmodFailsWithTheContainerFlagsHint) {
  write("Dockerfile", seed_dockerfile("-y -g --skip-limit-conf --no-verify"));
  Result r = trainimg("build Dockerfile --no-lint --progress none");
  EXPECT_EQ(r.rc, 1) << r.err;
  EXPECT_TRUE(contains(r.err, "Dockerfile:4:1: error: step 4/5 failed:")) << r.err;
  EXPECT_TRUE(contains(r.err,
                       "the step printed: Error: unable to detect installed kernels, exiting. "
                       "[efa-container-flags]"))
      << r.err;
}

TEST_F(BuildCli, FakeEfaInstallerRejectsAnUnknownFlagLikeTheRealOne) {
  write("Dockerfile", seed_dockerfile("-y --skip-kmod --skip-limit-conf --no-verify --no-such-flag"));
  Result r = trainimg("build Dockerfile --no-lint --progress tty");
  EXPECT_EQ(r.rc, 1) << r.err;
  EXPECT_TRUE(contains(r.out, "  efa_installer.sh: unrecognized option '--no-such-flag'\n")) << r.out;
  EXPECT_TRUE(contains(r.out, "  usage: efa_installer.sh [options]\n")) << r.out;
}

TEST_F(BuildCli, FakeEfaInstallerRecipeBuildsAndAFailingStepPointsAtTheRecipe) {
  std::string recipe = "base: " + base_ +
                       "\n"
                       "efa:\n"
                       "  installer: 1.50.0\n"
                       "  mirror: " +
                       url_ +
                       "\n"
                       "apt: [curl, ca-certificates]\n"
                       "steps:\n"
                       "  - name: hello\n"
                       "    run: echo hello-from-recipe\n";
  write("recipe.yaml", recipe);
  Result ok = trainimg("build recipe.yaml -t trainimg-test-fake-efa:recipe --progress tty");
  ASSERT_EQ(ok.rc, 0) << ok.out << ok.err;
  EXPECT_TRUE(contains(ok.out, "  hello-from-recipe\n")) << ok.out;
  EXPECT_TRUE(contains(ok.out, " as trainimg-test-fake-efa:recipe\n")) << ok.out;
  Result files = in_image("trainimg-test-fake-efa:recipe", "head -1 /opt/amazon/efa_installed_packages");
  EXPECT_EQ(files.out, "# EFA installer version: 1.50.0\n");

  write("recipe.yaml", recipe + "  - name: boom\n    run: \"false\"\n");
  Result bad = trainimg("build recipe.yaml --progress none");
  EXPECT_EQ(bad.rc, 1) << bad.err;
  EXPECT_TRUE(bad.err.starts_with("recipe.yaml:10:11: error: step 6/6 failed (line ")) << bad.err;
  EXPECT_TRUE(contains(bad.err,
                       " of the rendered Dockerfile): The command '/bin/sh -c false' returned a "
                       "non-zero code: 1\n    run: \"false\"\n"))
      << bad.err;
}

TEST_F(BuildCli, JsonProgressIsOneObjectPerLine) {
  write("Dockerfile", "FROM " + base_ + "\nRUN echo hello-from-step-2\n");
  Result r = trainimg("build Dockerfile --progress json --no-cache");
  ASSERT_EQ(r.rc, 0) << r.err;
  std::istringstream lines(r.out);
  std::string line;
  std::vector<nlohmann::json> ev;
  while (std::getline(lines, line)) {
    auto j = nlohmann::json::parse(line, nullptr, false);
    ASSERT_TRUE(j.is_object()) << line;
    ev.push_back(j);
  }
  ASSERT_GE(ev.size(), 4u);
  // Lint findings (if any) come first, then the context event opens the build.
  auto ctx =
      std::find_if(ev.begin(), ev.end(), [](const nlohmann::json& j) { return j["event"] == "context"; });
  ASSERT_NE(ctx, ev.end());
  EXPECT_EQ((*ctx)["schema"], "trainimg.build-progress/v1");
  EXPECT_EQ((*ctx)["files"], 1);
  for (auto it = ev.begin(); it != ctx; ++it) EXPECT_EQ((*it)["event"], "finding") << *it;
  bool saw_step2 = false, saw_output = false;
  for (const auto& j : ev) {
    if (j["event"] == "step" && j["step"] == 2) {
      saw_step2 = true;
      EXPECT_EQ(j["steps"], 2);
      EXPECT_EQ(j["instruction"], "RUN echo hello-from-step-2");
      EXPECT_EQ(j["file"], "Dockerfile");
      EXPECT_EQ(j["line"], 2);
    }
    if (j["event"] == "output" && j["text"] == "hello-from-step-2") {
      saw_output = true;
      EXPECT_EQ(j["step"], 2);
    }
  }
  EXPECT_TRUE(saw_step2);
  EXPECT_TRUE(saw_output);
  EXPECT_EQ(ev.back()["event"], "done");
  EXPECT_EQ(ev.back()["ok"], true);
  EXPECT_TRUE(ev.back()["image_id"].get<std::string>().starts_with("sha256:"));
}

TEST_F(BuildCli, DockerignoreDecidesWhatTheDaemonSees) {
  write("Dockerfile", "FROM " + base_ + "\nCOPY . /ctx\nRUN cd /ctx && find . | sort\n");
  write(".dockerignore", "# comment\n*.log\ndata\n!data/keep.txt\n**/secret*\n");
  write("app/main.py", "print(1)\n");
  write("app/secret.key", "k");
  write("build.log", "x");
  write("data/big.bin", "b");
  write("data/keep.txt", "keep");
  Result r = trainimg("build Dockerfile --no-cache --progress tty");
  ASSERT_EQ(r.rc, 0) << r.out << r.err;
  size_t from = r.out.find("step 3/3:");
  ASSERT_NE(from, std::string::npos) << r.out;
  std::string listing = r.out.substr(from);
  // The .dockerignore and Dockerfile are sent (the daemon drops neither: no
  // pattern names them); data/ itself is excluded, COPY recreates it as the
  // parent of the re-included keep.txt.
  EXPECT_TRUE(contains(
      listing,
      "  .\n  ./.dockerignore\n  ./Dockerfile\n  ./app\n  ./app/main.py\n  ./data\n  ./data/keep.txt\n"))
      << listing;
  EXPECT_FALSE(contains(listing, "secret")) << listing;
  EXPECT_FALSE(contains(listing, "big.bin")) << listing;
  EXPECT_FALSE(contains(listing, "build.log")) << listing;
}

TEST_F(BuildCli, DockerfileOutsideTheContextIsInjectedAndHiddenFromCopy) {
  fs::create_directories(ctx_ / "ctx");
  write("ctx/file.txt", "payload\n");
  write("elsewhere/Dockerfile", "FROM " + base_ + "\nCOPY . /ctx\nRUN ls -a /ctx\n");
  Result r = trainimg("build elsewhere/Dockerfile --context ctx --no-cache --progress tty");
  ASSERT_EQ(r.rc, 0) << r.out << r.err;
  std::string listing = r.out.substr(r.out.find("step 3/3:"));
  EXPECT_TRUE(contains(listing, "  file.txt\n")) << listing;
  EXPECT_FALSE(contains(listing, ".trainimg-dockerfile-")) << listing;
}

TEST_F(BuildCli, BuildArgsReachTheBuild) {
  write("Dockerfile", "FROM " + base_ + "\nARG GREETING=unset\nRUN echo \"greeting=$GREETING\"\n");
  Result r = trainimg("build Dockerfile --build-arg GREETING=hi-there --no-cache");
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "  greeting=hi-there\n")) << r.out;
}

TEST_F(BuildCli, UnreachableDaemonIsAClearErrorAndExit2) {
  write("Dockerfile", "FROM " + base_ + "\n");
  Result r = trainimg("build Dockerfile");  // sanity: works with the default socket
  ASSERT_EQ(r.rc, 0) << r.err;
  r = trainimg("build Dockerfile", "DOCKER_HOST=unix:///nonexistent/docker.sock ");
  EXPECT_EQ(r.rc, 2);
  EXPECT_TRUE(
      r.err.starts_with("unix:///nonexistent/docker.sock: error: cannot connect to the Docker daemon: "))
      << r.err;
  EXPECT_EQ(r.out, "");
}

TEST_F(BuildCli, BadInputsExit2WithOneLine) {
  Result missing = trainimg("build nope/Dockerfile");
  EXPECT_EQ(missing.rc, 2);
  EXPECT_TRUE(contains(missing.err, "error: the build context is not a directory")) << missing.err;
  write("Dockerfile", "FROM " + base_ + "\n");
  Result bad_arg = trainimg("build Dockerfile --build-arg =x");
  EXPECT_EQ(bad_arg.rc, 2);
  EXPECT_EQ(bad_arg.err, "--build-arg: error: '=x' has no name: write --build-arg KEY=VALUE\n");
  write(".dockerignore", "ok\n[oops\n");
  Result bad_ignore = trainimg("build Dockerfile");
  EXPECT_EQ(bad_ignore.rc, 2);
  EXPECT_TRUE(contains(bad_ignore.err,
                       ".dockerignore:2:1: error: bad .dockerignore pattern '[oops': syntax error "
                       "in pattern (unterminated '[')"))
      << bad_ignore.err;
}

// The mission in one command: recipe/Dockerfile -> image -> .sqsh -> report.
TEST_F(BuildCli, FakeEfaInstallerBuildSqshImportsThePublishedImageAndPrintsItsInspection) {
  // The FAKE base lacks NGC's NCCL_NET_PLUGIN=ofi: the image's error finding
  // decides the exit code (1), after the image was published.
  write("Dockerfile", seed_dockerfile());
  fs::path bad = scratch_ / "bad.sqsh";
  Result no_plugin = trainimg("build Dockerfile --progress none --sqsh " + quote(bad.string()));
  EXPECT_EQ(no_plugin.rc, 1) << no_plugin.out << no_plugin.err;
  EXPECT_TRUE(contains(no_plugin.out, "[nccl-net-plugin]\n")) << no_plugin.out;
  EXPECT_TRUE(fs::exists(bad));

  // Its own build-cache chain: the --no-cache build of the same seed file in
  // another test, run meanwhile (ctest -j), must not become the cache that
  // the --force rebuild below picks (a new image, other bytes).
  std::string own = seed_dockerfile();
  own.insert(own.find('\n') + 1, "LABEL trainimg.test.cache-chain=sqsh-" + std::to_string(::getpid()) + "\n");
  write("Dockerfile", own + "ENV NCCL_NET_PLUGIN=ofi\n");
  fs::path out = scratch_ / "shared" / "img.sqsh";
  fs::create_directories(out.parent_path());
  // No SOURCE_DATE_EPOCH: the import's reference time is the image's
  // `created`, not the clock of the container it exports (/etc/hosts …).
  const std::string no_sde = "env -u SOURCE_DATE_EPOCH ";
  Result r = trainimg(
      "build Dockerfile -t trainimg-test-fake-efa:sqsh --progress none --sqsh " + quote(out.string()),
      no_sde);
  ASSERT_EQ(r.rc, 0) << r.out << r.err;
  EXPECT_TRUE(r.out.starts_with("built sha256:")) << r.out;
  EXPECT_TRUE(contains(r.out, "\n" + out.string() + "\n  ")) << r.out;
  EXPECT_TRUE(contains(r.out, "  sidecar: " + out.string() + ".json\n")) << r.out;
  // The report of the published image, as `trainimg inspect OUT` prints it.
  Result again = sh_split(std::string(TRAINIMG_BIN) + " inspect " + quote(out.string()), scratch_);
  ASSERT_EQ(again.rc, 0) << again.err;
  ASSERT_FALSE(again.out.empty());
  EXPECT_TRUE(r.out.ends_with(again.out)) << r.out << "\n---\n" << again.out;
  EXPECT_TRUE(contains(again.out, "1.50.0")) << again.out;
  // A real squashfs, read by the real unsquashfs, with the installer's files.
  Result cat =
      sh_split("unsquashfs -cat " + quote(out.string()) + " /opt/amazon/efa_installed_packages", scratch_);
  ASSERT_EQ(cat.rc, 0) << cat.err;
  EXPECT_TRUE(cat.out.starts_with("# EFA installer version: 1.50.0\n")) << cat.out;
  auto sidecar = nlohmann::json::parse(slurp(out.string() + ".json"));
  EXPECT_EQ(sidecar["inspect"]["verdict"].get<std::string>().empty(), false);
  EXPECT_TRUE(sidecar["source"].get<std::string>().starts_with("dockerd://sha256:")) << sidecar["source"];
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(out.parent_path()))
    names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, (std::vector<std::string>{"img.sqsh", "img.sqsh.json"}));

  // An existing target is refused before anything is built over it...
  std::string before = slurp(out);
  Result refused = trainimg("build Dockerfile --progress none --sqsh " + quote(out.string()));
  EXPECT_EQ(refused.rc, 2) << refused.out << refused.err;
  EXPECT_TRUE(contains(refused.err, "img.sqsh")) << refused.err;
  EXPECT_EQ(slurp(out), before);
  // ...unless --force, which replaces it atomically (same image: same bytes,
  // though its container is created in another second of the clock).
  ::usleep(1100000);
  Result forced = trainimg("build Dockerfile --progress none --force --sqsh " + quote(out.string()), no_sde);
  EXPECT_EQ(forced.rc, 0) << forced.err;
  EXPECT_TRUE(slurp(out) == before) << "the same image imported again differs (" << before.size()
                                    << " bytes before)";
  EXPECT_EQ(nlohmann::json::parse(slurp(out.string() + ".json"))["reference_mtime"]["from"], "image_created");
  // SOURCE_DATE_EPOCH still decides when set: enroot's files carry it.
  Result sde = trainimg("build Dockerfile --progress none --force --sqsh " + quote(out.string()),
                        "SOURCE_DATE_EPOCH=1700000000 ");
  EXPECT_EQ(sde.rc, 0) << sde.err;
  EXPECT_TRUE(slurp(out) != before);
  Result ls = sh_split("unsquashfs -lls -UTC " + quote(out.string()) + " etc/rc", scratch_);
  EXPECT_TRUE(contains(ls.out, " 2023-11-14 22:13 squashfs-root/etc/rc\n")) << ls.out;
}

TEST_F(BuildCli, BuildSqshJsonEventsEndWithTheVerdict) {
  write("Dockerfile", "FROM " + base_ + "\nRUN mkdir -p /opt/app && echo hi > /opt/app/hello\n");
  fs::path out = scratch_ / "app.sqsh";
  Result r = trainimg("build Dockerfile --progress json --sqsh " + quote(out.string()));
  ASSERT_EQ(r.rc, 0) << r.out << r.err;
  std::istringstream lines(r.out);
  std::string line;
  std::vector<std::string> events;
  nlohmann::json last, inspect;
  while (std::getline(lines, line)) {
    auto j = nlohmann::json::parse(line, nullptr, false);
    ASSERT_TRUE(j.is_object()) << line;
    events.push_back(j["event"]);
    if (j["event"] == "inspect") inspect = j;
    last = j;
  }
  auto pos = [&](const std::string& e) {
    return std::find(events.begin(), events.end(), e) - events.begin();
  };
  EXPECT_LT(pos("built"), pos("imported"));
  EXPECT_LT(pos("imported"), pos("inspect"));
  EXPECT_EQ(last["event"], "done");
  EXPECT_EQ(last["ok"], true);
  EXPECT_EQ(last["sqsh"], out.string());
  EXPECT_EQ(inspect["report"]["schema"], "trainimg.inspect/v1");
  // The verdict is the worst severity among the report's findings.
  std::string worst = "clean";
  for (const auto& f : inspect["report"]["findings"]) {
    if (f["severity"] == "error")
      worst = "error";
    else if (f["severity"] == "warning" && worst != "error")
      worst = "warning";
  }
  EXPECT_EQ(last["verdict"], worst);
  EXPECT_NE(worst, "error");  // no EFA stack at all is not an error in a plain image
  Result cat = sh_split("unsquashfs -cat " + quote(out.string()) + " /opt/app/hello", scratch_);
  EXPECT_EQ(cat.out, "hi\n") << cat.err;
}

TEST_F(BuildCli, SqshOnlyFlagsWithoutSqshAreRefused) {
  write("Dockerfile", "FROM " + base_ + "\n");
  Result r = trainimg("build Dockerfile --force");
  EXPECT_EQ(r.rc, 2);
  EXPECT_EQ(r.err, "--force/--enroot-defaults: error: only with --sqsh OUT.sqsh\n");
  EXPECT_EQ(r.out, "");
}

}  // namespace
