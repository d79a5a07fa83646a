// SPDX-License-Identifier: GPL-3.0-or-later
// A recipe is judged by the Dockerfile rules on its rendering: each case is
// recipe text → render_recipe_text → findings at the YAML node the rendered
// line maps back to (an env value, an env key, an apt package, an efa.flags
// item). These replace the recipe-model checks that judged the same ids.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "recipes/recipe/test_support.h"
#include "recipes/recipes.h"

namespace trainimg::recipes {
namespace {

using testing::briefs;
using ::testing::ElementsAre;
using ::testing::IsEmpty;
using testing::kHead;

std::vector<std::string> found(const std::string& text) {
  return briefs(render_recipe_text("recipe.yaml", text, {}, "").diagnostics);
}

std::string with_env(const std::string& env) {
  return std::string(kHead) + "steps:\n  - name: s\n    env:" + env;
}

TEST(RecipeRendered, NcclNetPluginAtTheValue) {
  EXPECT_THAT(
      found(with_env("\n      NCCL_NET_PLUGIN: libnccl-net.so\n")),
      ElementsAre("6:24 error [nccl-net-plugin] NCCL_NET_PLUGIN is set to 'libnccl-net.so' instead of "
                  "'ofi'"));
}

TEST(RecipeRendered, NcclNetPluginEmptiedAtTheKey) {
  EXPECT_THAT(found(with_env(" {NCCL_NET_PLUGIN: ''}\n")),
              ElementsAre("5:11 error [nccl-net-plugin] NCCL_NET_PLUGIN is emptied: NCCL would load the "
                          "default-named (InfiniBand) plugin"));
  EXPECT_THAT(found(with_env("\n      NCCL_NET_PLUGIN:\n")),
              ElementsAre("6:7 error [nccl-net-plugin] NCCL_NET_PLUGIN is emptied: NCCL would load the "
                          "default-named (InfiniBand) plugin"));
}

TEST(RecipeRendered, NcclNetPluginQuietWhenItStaysOfi) {
  EXPECT_THAT(found(with_env(" {NCCL_NET_PLUGIN: ofi, NCCL_TUNER_PLUGIN: ofi}\n")), IsEmpty());
}

TEST(RecipeRendered, NcclNetIbAtTheValueOtherIbKnobsAtTheKey) {
  EXPECT_THAT(
      found(with_env(" {NCCL_NET: ib}\n")),
      ElementsAre("5:21 error [nccl-ib-settings] NCCL_NET=IB forces the InfiniBand transport instead of "
                  "EFA"));
  EXPECT_THAT(
      found(with_env("\n      NCCL_IB_HCA: mlx5_0\n")),
      ElementsAre("6:7 warning [nccl-ib-settings] NCCL_IB_HCA is an InfiniBand-only setting; on EFA it "
                  "does nothing or hides a wrong transport"));
  EXPECT_THAT(found(with_env(" {NCCL_NET: Libfabric, NCCL_IB_DISABLE: '1', NCCL_DEBUG: INFO}\n")), IsEmpty());
}

TEST(RecipeRendered, LdLibraryPathThatSearchesTheBaseFirstAtTheValue) {
  EXPECT_THAT(
      found(with_env(
          "\n      LD_LIBRARY_PATH: "
          "/usr/lib/x86_64-linux-gnu:/opt/amazon/ofi-nccl/lib:/opt/amazon/efa/lib:${LD_LIBRARY_PATH}\n")),
      ElementsAre(
          "6:24 error [efa-ld-library-path] the image's final LD_LIBRARY_PATH "
          "('/usr/lib/x86_64-linux-gnu:/opt/amazon/ofi-nccl/lib:/opt/amazon/efa/lib:/opt/amazon/ofi-nccl/"
          "lib:/opt/amazon/efa/lib:${LD_LIBRARY_PATH}') searches /usr/lib/x86_64-linux-gnu before "
          "/opt/amazon/efa/lib: the base's older libfabric/aws-ofi-nccl can be loaded first"));
}

TEST(RecipeRendered, LdLibraryPathThatDropsTheInheritedValueWarns) {
  EXPECT_THAT(found(with_env(
                  "\n      LD_LIBRARY_PATH: /opt/amazon/ofi-nccl/lib:/opt/amazon/efa/lib:/usr/local/lib\n")),
              ElementsAre("6:24 warning [efa-ld-library-path] the image's final LD_LIBRARY_PATH drops the "
                          "inherited ${LD_LIBRARY_PATH} of the base image"));
  // Emptied: the rendered `""` is no node of the recipe; the key is.
  EXPECT_THAT(
      found(with_env("\n      LD_LIBRARY_PATH:\n")),
      ElementsAre("6:7 error [efa-ld-library-path] the image's final LD_LIBRARY_PATH ('') does not list "
                  "/opt/amazon/ofi-nccl/lib (the installer's aws-ofi-nccl) and /opt/amazon/efa/lib (the "
                  "installer's libfabric): the base's older copies can be loaded"));
}

TEST(RecipeRendered, LdLibraryPathQuietWhenTheInstallersDirectoriesComeBeforeTheBase) {
  // The rule asks for the installer's directories before anything that may
  // hold the base's copies, not literally first; lib64 is libfabric's too.
  EXPECT_THAT(
      found(with_env("\n      LD_LIBRARY_PATH: "
                     "/usr/local/lib:/opt/amazon/ofi-nccl/lib:/opt/amazon/efa/lib:${LD_LIBRARY_PATH}\n")),
      IsEmpty());
  EXPECT_THAT(
      found(with_env(
          "\n      LD_LIBRARY_PATH: /opt/amazon/ofi-nccl/lib:/opt/amazon/efa/lib64:$LD_LIBRARY_PATH\n")),
      IsEmpty());
}

// Issue 25: a run step builds libfabric into /usr/local, the step's env puts
// /usr/local/lib first: the finding sits at the env value, the build related.
TEST(RecipeRendered, LdLibraryPathThatSearchesTheFilesOwnLibfabricFirst) {
  RenderResult r = render_recipe_text(
      "recipe.yaml",
      std::string(kHead) +
          "steps:\n  - name: fabric\n"
          "    run: cd /tmp/libfabric-2.1.0 && ./configure --prefix=/usr/local && make install\n"
          "    env:\n      LD_LIBRARY_PATH: "
          "/usr/local/lib:/opt/amazon/ofi-nccl/lib:/opt/amazon/efa/lib:${LD_LIBRARY_PATH}\n",
      {}, "");
  ASSERT_EQ(r.diagnostics.size(), 1u) << ::testing::PrintToString(briefs(r.diagnostics));
  const Diagnostic& d = r.diagnostics[0];
  EXPECT_EQ(d.rule_id + " " + std::to_string(d.line) + ":" + std::to_string(d.column),
            "efa-ld-library-path 7:24");
  EXPECT_NE(
      d.message.find("the libfabric this file installs into /usr/local/lib would be loaded instead of the "
                     "installer's"),
      std::string::npos)
      << d.message;
  ASSERT_EQ(d.related.size(), 1u);
  EXPECT_EQ(d.related[0].file + ":" + std::to_string(d.related[0].line), "recipe.yaml:5");
}

TEST(RecipeRendered, OpenMpiAptPackagesAreOneFindingWithTheOthersRelated) {
  RenderResult r = render_recipe_text(
      "recipe.yaml",
      std::string(kHead) + "apt: [curl, openmpi-bin, libopenmpi-dev=4.1.6-7, libopenmpi3t64]\n", {}, "");
  ASSERT_THAT(
      briefs(r.diagnostics),
      ElementsAre("3:13 error [mpi-second-install] a distribution Open MPI package beside the base's Open "
                  "MPI (/usr/local/mpi): installs openmpi-bin (and 2 places more)"));
  const auto& rel = r.diagnostics[0].related;
  ASSERT_EQ(rel.size(), 2u);
  EXPECT_EQ(rel[0].file + ":" + std::to_string(rel[0].line) + ":" + std::to_string(rel[0].column),
            "recipe.yaml:3:26");
  EXPECT_EQ(rel[1].file + ":" + std::to_string(rel[1].line) + ":" + std::to_string(rel[1].column),
            "recipe.yaml:3:50");
  EXPECT_EQ(r.diagnostics[0].source_line, "apt: [curl, openmpi-bin, libopenmpi-dev=4.1.6-7, libopenmpi3t64]");
}

TEST(RecipeRendered, EnvPointingAtTheInstallersOpenMpiAtTheValue) {
  RenderResult r = render_recipe_text("recipe.yaml",
                                      with_env("\n      PATH: /opt/amazon/openmpi/bin:${PATH}\n"
                                               "      OPAL_PREFIX: /opt/amazon/openmpi5\n"),
                                      {}, "");
  ASSERT_THAT(
      briefs(r.diagnostics),
      ElementsAre("6:13 error [mpi-second-install] the installer's Open MPI (/opt/amazon/openmpi*) beside "
                  "the base's Open MPI (/usr/local/mpi): ENV PATH points at it (and 1 place more)"));
  ASSERT_EQ(r.diagnostics[0].related.size(), 1u);
  EXPECT_EQ(r.diagnostics[0].related[0].line, 7);
  EXPECT_EQ(r.diagnostics[0].related[0].column, 20);
}

TEST(RecipeRendered, DefaultMpiMetapackageAndBuildSearchPaths) {
  EXPECT_THAT(
      found(std::string(kHead) + "apt: [mpi-default-bin]\n"),
      ElementsAre("3:7 error [mpi-second-install] a distribution Open MPI package beside the base's Open "
                  "MPI (/usr/local/mpi): installs mpi-default-bin"));
  EXPECT_THAT(
      found(with_env(" {PKG_CONFIG_PATH: /opt/amazon/openmpi/lib/pkgconfig}\n")),
      ElementsAre("5:28 error [mpi-second-install] the installer's Open MPI (/opt/amazon/openmpi*) beside "
                  "the base's Open MPI (/usr/local/mpi): ENV PKG_CONFIG_PATH points at it"));
}

TEST(RecipeRendered, OpenMpiQuietOffNgcAndForLookAlikes) {
  EXPECT_THAT(found("base: ubuntu:24.04\nefa: {installer: 1.50.0}\napt: [openmpi-bin]\n"), IsEmpty());
  EXPECT_THAT(found(std::string(kHead) +
                    "apt: [mpich, openmpi-doc]\n"  // another MPI, and Open MPI's documentation only
                    "steps:\n  - name: s\n    env: {PATH: '/opt/amazon/openmpi-tools/bin:${PATH}', "
                    "NOTE: /opt/amazon/openmpi}\n"),
              IsEmpty());
}

TEST(RecipeRendered, DisableNgcAtTheFlagOnAnNgcBaseOnly) {
  EXPECT_THAT(
      found("base: nvcr.io/nvidia/pytorch:26.08-py3\nefa:\n  installer: 1.50.0\n  flags: [--disable-ngc]\n"),
      ElementsAre("4:11 warning [efa-disable-ngc] --disable-ngc on an NGC base "
                  "(nvcr.io/nvidia/pytorch:26.08-py3): the installer would skip the NGC-specific "
                  "aws-ofi-nccl package"));
  EXPECT_THAT(found("base: ubuntu:24.04\nefa:\n  installer: 1.50.0\n  flags: [--disable-ngc]\n"), IsEmpty());
}

}  // namespace
}  // namespace trainimg::recipes
