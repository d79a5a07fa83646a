// SPDX-License-Identifier: GPL-3.0-or-later
#include "builder/pyxis/pyxis.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>

#include "common/error.h"
#include "inspect/testing/image_builder.h"

namespace trainimg::builder {
namespace {

namespace fs = std::filesystem;
using Vars = std::map<std::string, std::string>;

PyxisEnv env_of(const Vars& v) {
  return pyxis_env([&](const char* name) -> const char* {
    auto it = v.find(name);
    return it == v.end() ? nullptr : it->second.c_str();
  });
}

TEST(PyxisImporter, PathIsPerUserAndJobStepLikePyxisSimpleImporter) {
  PyxisEnv e = env_of({{"PYXIS_RUNTIME_PATH", "/run/pyxis"},
                       {"SLURM_JOB_UID", "1000"},
                       {"SLURM_JOB_ID", "42"},
                       {"SLURM_STEP_ID", "0"}});
  EXPECT_EQ(pyxis_sqsh_path(e), "/run/pyxis/1000/42.0.sqsh");
}

TEST(PyxisImporter, MissingJobIdIsAnErrorNamingTheVariable) {
  try {
    env_of({{"SLURM_STEP_ID", "0"}});
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.diagnostic().file, "SLURM_JOB_ID");
    EXPECT_EQ(e.diagnostic().message, "not set");
  }
}

// Slurm sets no SLURM_STEP_ID in the batch step (nor extern/interactive):
// the step is named as slurmstepd's title names it.
TEST(PyxisImporter, WithoutStepIdTheStepIsNamedAsSlurmstepdNamesIt) {
  Vars v{{"SLURM_JOB_ID", "42"}, {"SLURM_JOB_UID", "1000"}, {"SLURMD_NODENAME", "gpu-017"}};
  std::string asked;
  PyxisEnv e = pyxis_env(
      [&](const char* name) -> const char* {
        auto it = v.find(name);
        return it == v.end() ? nullptr : it->second.c_str();
      },
      [&](const std::string& job) {
        asked = job;
        return std::string("batch");
      });
  EXPECT_EQ(asked, "42");
  EXPECT_EQ(e.step_id, "batch");
  EXPECT_EQ(pyxis_sqsh_path(e), "/run/pyxis/1000/42.batch.sqsh");
  EXPECT_EQ(pyxis_lease_id(e), "gpu-017.1000.42.batch");
  // No slurmstepd among the parents: an error naming the variable, not a guess.
  try {
    pyxis_env(
        [&](const char* name) -> const char* {
          auto it = v.find(name);
          return it == v.end() ? nullptr : it->second.c_str();
        },
        [](const std::string&) { return std::string(); });
    FAIL() << "no error";
  } catch (const Error& err) {
    EXPECT_EQ(err.diagnostic().file, "SLURM_STEP_ID");
    EXPECT_NE(err.diagnostic().message.find("no slurmstepd of job 42"), std::string::npos);
  }
}

// The real process title: a process whose argv[0] is what slurmstepd sets
// ("slurmstepd: [JOB.STEP]"), found from a grandchild of it.
TEST(PyxisImporter, TheStepIsReadFromTheProcessTitleOfAParent) {
  fs::path t = fs::temp_directory_path() / ("trainimg-steptitle-" + std::to_string(getpid()));
  fs::create_directories(t);
  const std::string pidfile = (t / "pid").string();
  {
    std::ofstream inner(t / "inner.sh");
    inner << "echo $$ >" << pidfile << "\nexec sleep 30\n";
  }
  // TITLE (bash, argv[0] set as slurmstepd sets its title) -> sh inner.sh -> sleep
  std::string cmd = "bash -c 'exec -a \"slurmstepd: [77.batch]\" bash -c \"sh " + (t / "inner.sh").string() +
                    "; true\"' >/dev/null 2>&1 & echo $! >" + (t / "top").string();
  ASSERT_EQ(std::system(cmd.c_str()), 0);
  std::string grandchild;
  for (int i = 0; i < 100 && grandchild.empty(); ++i) {
    usleep(50000);
    std::ifstream in(pidfile);
    std::getline(in, grandchild);
  }
  ASSERT_FALSE(grandchild.empty());
  const pid_t g = static_cast<pid_t>(std::stol(grandchild));
  EXPECT_EQ(slurm_step_from_process(g, "77"), "batch");
  EXPECT_EQ(slurm_step_from_process(g, "78"), "") << "another job's slurmstepd is not this step";
  EXPECT_EQ(slurm_step_from_process(getpid(), "77"), "");
  int rc = std::system(("kill " + grandchild + " >/dev/null 2>&1").c_str());
  (void)rc;
  fs::remove_all(t);
}

TEST(PyxisImporter, AJobIdThatIsAPathIsRefused) {
  EXPECT_THROW(env_of({{"SLURM_JOB_ID", "../../etc"}, {"SLURM_STEP_ID", "0"}}), Error);
  EXPECT_THROW(env_of({{"SLURM_JOB_ID", ".."}, {"SLURM_STEP_ID", "0"}}), Error);
}

TEST(PyxisImporter, PodmanIsRefusedWithAHint) {
  PyxisEnv e =
      env_of({{"SLURM_JOB_ID", "1"}, {"SLURM_STEP_ID", "0"}, {"PYXIS_RUNTIME_PATH", "/nonexistent"}});
  try {
    pyxis_get("podman://ubuntu:24.04", e);
    FAIL() << "no error";
  } catch (const Error& err) {
    EXPECT_EQ(err.diagnostic().hint,
              "use docker://REGISTRY#IMAGE (straight from the registry) or dockerd://IMAGE");
  }
}

TEST(PyxisImporter, GetImportsThenReleaseRemovesAndIsIdempotent) {
  inspect::testing::TempDir tmp;
  inspect::testing::ImageSpec img;
  img.layer().dir("/bin").file("/bin/sh", "#!", 0755);
  inspect::testing::write_rootfs(img, tmp / "root");
  PyxisEnv e = env_of({{"PYXIS_RUNTIME_PATH", tmp / "rt"},
                       {"SLURM_JOB_UID", "1000"},
                       {"SLURM_JOB_ID", "7"},
                       {"SLURM_STEP_ID", "1"}});
  std::string path = pyxis_get("dir:" + tmp / "root", e);
  EXPECT_EQ(path, tmp / "rt/1000/7.1.sqsh");
  EXPECT_TRUE(fs::exists(path));
  EXPECT_TRUE(fs::exists(path + ".json"));
  struct stat st {};
  ASSERT_EQ(::stat((tmp / "rt/1000").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  // A retried step replaces its own file.
  EXPECT_EQ(pyxis_get("dir:" + tmp / "root", e), path);
  pyxis_release(e);
  EXPECT_FALSE(fs::exists(path));
  EXPECT_FALSE(fs::exists(path + ".json"));
  EXPECT_NO_THROW(pyxis_release(e));  // Pyxis calls it twice
}

}  // namespace
}  // namespace trainimg::builder
