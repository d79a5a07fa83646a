// SPDX-License-Identifier: GPL-3.0-or-later
#include "builder/pyxis.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
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
