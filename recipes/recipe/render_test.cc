// SPDX-License-Identifier: GPL-3.0-or-later
#include "recipes/recipe/render.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "recipes/recipe/test_support.h"

namespace trainimg::recipes {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;
using testing::kHead;
using testing::load_text;

Rendered render_text(const std::string& text, const std::vector<std::string>& overrides = {}) {
  LoadResult lr = load_text(text, overrides);
  EXPECT_THAT(lr.diagnostics, IsEmpty());
  return render_dockerfile(*lr.recipe);
}

// The part of the rendered text after the EFA stage (the steps).
std::string after_efa(const std::string& df) {
  std::string marker = ":${LD_LIBRARY_PATH}\n";
  return df.substr(df.find(marker) + marker.size());
}

TEST(RenderDockerfile, MinimalRecipeIsTheSeedsRecommendedDockerfile) {
  Rendered r = render_text(std::string(kHead) + "apt: [curl, ca-certificates, git]\n");
  EXPECT_EQ(r.text,
            "# Rendered by trainimg render from recipe.yaml; edit the recipe and render again.\n"
            "FROM nvcr.io/nvidia/pytorch:26.08-py3\n"
            "\n"
            "ARG EFA_INSTALLER_VERSION=1.50.0\n"
            "\n"
            "# 1. EFA installer (container-specific: exclude kernel modules). Run apt-get update first in the same "
            "RUN.\n"
            "RUN apt-get update \\\n"
            " && apt-get install -y --no-install-recommends curl ca-certificates git \\\n"
            " && cd /tmp \\\n"
            " && curl -fsSL -O https://efa-installer.amazonaws.com/aws-efa-installer-${EFA_INSTALLER_VERSION}.tar.gz "
            "\\\n"
            " && tar -xf aws-efa-installer-${EFA_INSTALLER_VERSION}.tar.gz \\\n"
            " && cd aws-efa-installer \\\n"
            " && ./efa_installer.sh -y -g --skip-kmod --skip-limit-conf --no-verify \\\n"
            " && cd / && rm -rf /tmp/aws-efa-installer* /var/lib/apt/lists/*\n"
            "\n"
            "ENV LD_LIBRARY_PATH=/opt/amazon/ofi-nccl/lib:/opt/amazon/efa/lib:${LD_LIBRARY_PATH}\n");
  EXPECT_EQ(r.map.size(), 16u);  // one source-map entry per rendered line
}

TEST(RenderDockerfile, NoAptPackagesMeansNoInstallLineButStillUpdate) {
  Rendered r = render_text(kHead);
  EXPECT_THAT(r.text, HasSubstr("RUN apt-get update \\\n && cd /tmp \\\n"));
  EXPECT_THAT(r.text, ::testing::Not(HasSubstr("apt-get install")));
}

TEST(RenderDockerfile, MirrorPlatformAndExtraFlags) {
  Rendered r = render_text(
      "base: nvcr.io/nvidia/pytorch:26.08-py3\n"
      "platform: linux/amd64\n"
      "efa: {installer: 1.50.0, mirror: 'http://127.0.0.1:8000/efa/', flags: [--skip-mpi, -k]}\n");
  EXPECT_THAT(r.text, HasSubstr("FROM --platform=linux/amd64 nvcr.io/nvidia/pytorch:26.08-py3\n"));
  EXPECT_THAT(r.text,
              HasSubstr(" && curl -fsSL -O http://127.0.0.1:8000/efa/aws-efa-installer-${EFA_INSTALLER_VERSION}.tar.gz"));
  // -k is --skip-kmod, already in the container set: not repeated.
  EXPECT_THAT(r.text, HasSubstr("./efa_installer.sh -y -g --skip-kmod --skip-limit-conf --no-verify --skip-mpi \\\n"));
}

TEST(RenderDockerfile, StepsRenderEnvThenCopyThenOneJoinedRun) {
  Rendered r = render_text(std::string(kHead) +
                           "args: {COMMIT: abc}\n"
                           "steps:\n"
                           "  - name: build\n"
                           "    description: builds it\n"
                           "    env: {A: '1', B: two words}\n"
                           "    copy: [{src: src/, dst: /opt/src/}]\n"
                           "    run: |\n"
                           "      # comment lines are dropped\n"
                           "      cd /opt/src\n"
                           "\n"
                           "      ./configure --prefix=/usr \\\n"
                           "        --enable-x\n"
                           "      make -j8 &&\n"
                           "        make install\n");
  EXPECT_THAT(r.text, HasSubstr("ARG EFA_INSTALLER_VERSION=1.50.0\nARG COMMIT=abc\n"));
  EXPECT_EQ(after_efa(r.text),
            "\n"
            "# 2. build: builds it\n"
            "ENV A=1\n"
            "ENV B=\"two words\"\n"
            "COPY src/ /opt/src/\n"
            "RUN cd /opt/src \\\n"
            " && ./configure --prefix=/usr \\\n"
            "    --enable-x \\\n"
            " && make -j8 && \\\n"
            "    make install\n");
}

TEST(RenderDockerfile, RawShellKeepsTheTextWithoutAddingAnd) {
  Rendered r = render_text(std::string(kHead) +
                           "steps:\n"
                           "  - name: loop\n"
                           "    shell: raw\n"
                           "    run: |\n"
                           "      for f in a b; do\n"
                           "        echo $f;\n"
                           "      done\n");
  EXPECT_EQ(after_efa(r.text),
            "\n"
            "# 2. loop\n"
            "RUN for f in a b; do \\\n"
            "    echo $f; \\\n"
            "    done\n");
}

TEST(RenderDockerfile, ImageConfigurationComesLast) {
  Rendered r = render_text(std::string(kHead) +
                           "labels: {org.opencontainers.image.title: \"train \\\"x\\\"\"}\n"
                           "workdir: /workspace\n"
                           "entrypoint: [/opt/nvidia/nvidia_entrypoint.sh]\n"
                           "cmd: [python, \"train.py\"]\n"
                           "steps:\n"
                           "  - name: code\n"
                           "    copy: [{src: 'my code/', dst: /workspace/}]\n");
  EXPECT_EQ(after_efa(r.text),
            "\n"
            "# 2. code\n"
            "COPY [\"my code/\", \"/workspace/\"]\n"
            "\n"
            "# Image configuration\n"
            "LABEL org.opencontainers.image.title=\"train \\\"x\\\"\"\n"
            "WORKDIR /workspace\n"
            "ENTRYPOINT [\"/opt/nvidia/nvidia_entrypoint.sh\"]\n"
            "CMD [\"python\", \"train.py\"]\n");
}

TEST(RenderDockerfile, OverridesAreNamedInTheHeader) {
  Rendered r = render_text(kHead, {"efa.installer=1.49.0"});
  EXPECT_THAT(r.text, HasSubstr("from recipe.yaml; edit the recipe and render again.\n# --set efa.installer=1.49.0\n"
                                "FROM "));
  EXPECT_THAT(r.text, HasSubstr("ARG EFA_INSTALLER_VERSION=1.49.0\n"));
}

TEST(RenderDockerfile, IsDeterministic) {
  std::string text = std::string(kHead) + "apt: [git]\nsteps:\n  - {name: a, env: {X: '1', Y: '2'}, run: make}\n";
  EXPECT_EQ(render_text(text).text, render_text(text).text);
}

TEST(SourceMap, VerbatimRunTextMapsColumnForColumn) {
  Rendered r = render_text(std::string(kHead) +
                           "steps:\n"
                           "  - name: s\n"
                           "    run: |\n"
                           "      apt-get update\n"
                           "      apt-get install -y openmpi-bin\n");
  // Rendered: " && apt-get install -y openmpi-bin" on the last line.
  int last = static_cast<int>(r.map.size());
  Diagnostic d;
  d.line = last;
  d.column = 24;  // 'o' of openmpi-bin in the rendered line
  d.length = 11;
  ASSERT_TRUE(map_to_recipe(r.map, d));
  EXPECT_EQ(d.file, "recipe.yaml");
  EXPECT_EQ(d.line, 7);
  EXPECT_EQ(d.column, 26);
  EXPECT_EQ(d.length, 11);
}

TEST(SourceMap, GeneratedTextMapsToItsNode) {
  Rendered r = render_text(std::string(kHead) + "steps:\n  - name: s\n    env: {NCCL_NET: IB}\n");
  int last = static_cast<int>(r.map.size());
  Diagnostic d;
  d.line = last;  // ENV NCCL_NET=IB
  d.column = 14;  // the value
  ASSERT_TRUE(map_to_recipe(r.map, d));
  EXPECT_EQ(d.line, 5);
  EXPECT_EQ(d.column, 21);
  d.line = 9;  // " && curl -fsSL -O …": the installer version
  d.column = 70;
  ASSERT_TRUE(map_to_recipe(r.map, d));
  EXPECT_EQ(d.line, 2);
  EXPECT_EQ(d.column, 18);
  d.line = 1;  // the header comment has no recipe node
  d.column = 1;
  EXPECT_FALSE(map_to_recipe(r.map, d));
}

TEST(CheckRunText, TrailingCommentsAreRefusedOutsideQuotes) {
  LoadResult lr = load_text(std::string(kHead) +
                            "steps:\n"
                            "  - name: s\n"
                            "    run: |\n"
                            "      echo 'a # b' \"c # d\" e\\ #f\n"
                            "      make # build it\n");
  std::vector<Diagnostic> d = check_run_text(*lr.recipe);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(testing::brief(d[0]),
            "7:12 error [recipe-schema] a '#' comment at the end of a run line would swallow the commands joined "
            "after it");
}

}  // namespace
}  // namespace trainimg::recipes
