// SPDX-License-Identifier: GPL-3.0-or-later
// DaemonImage against the real dockerd (skipped, saying so, without a
// daemon socket): the image is there while it lives and gone after, also
// when the test body throws.
#include "inspect/testing/daemon_image.h"

#include <gtest/gtest.h>

#include <cstdlib>

#include "common/error.h"
#include "inspect/engine/engine.h"

namespace trainimg::inspect::testing {
namespace {

bool daemon_has(const engine::Engine& e, const std::string& tag) {
  try {
    e.get_json("/images/" + engine::url_escape(tag) + "/json");
    return true;
  } catch (const Error& err) {
    if (std::string(err.what()).find("HTTP 404") == std::string::npos) throw;
    return false;
  }
}

ImageSpec two_layers(const std::string& tag) {
  ImageSpec img;
  img.tag = tag;
  img.config.env = {"PATH=/usr/bin"};
  img.layer().dir("/opt").file("/opt/a", "a\n");
  img.layer().whiteout("/opt/a").file("/opt/b", "b\n");
  return img;
}

TEST(DaemonImage, IsLoadedUnderItsOwnTagAndRemovedAfter) {
  if (auto why = docker_daemon_unavailable()) GTEST_SKIP() << *why;
  auto e = engine::Engine::connect();
  std::string tag;
  {
    DaemonImage a(two_layers("Odd Name_X:1")), b(two_layers("Odd Name_X:1"));
    tag = a.tag();
    EXPECT_TRUE(tag.starts_with("trainimg-test/odd-name-x-")) << tag;
    EXPECT_TRUE(tag.ends_with(":latest")) << tag;
    EXPECT_NE(a.tag(), b.tag());
    EXPECT_TRUE(daemon_has(e, a.tag()));
    EXPECT_TRUE(daemon_has(e, b.tag()));
  }
  EXPECT_FALSE(daemon_has(e, tag));
}

TEST(DaemonImage, IsRemovedWhenTheTestBodyThrows) {
  if (auto why = docker_daemon_unavailable()) GTEST_SKIP() << *why;
  auto e = engine::Engine::connect();
  std::string tag;
  try {
    DaemonImage a(two_layers("thrown:1"));
    tag = a.tag();
    throw std::runtime_error("test failure");
  } catch (const std::runtime_error&) {
  }
  ASSERT_FALSE(tag.empty());
  EXPECT_FALSE(daemon_has(e, tag));
}

TEST(DaemonImage, NoSocketIsAReasonToSkip) {
  const char* was = std::getenv("DOCKER_HOST");
  const std::optional<std::string> saved = was ? std::optional<std::string>(was) : std::nullopt;
  ::setenv("DOCKER_HOST", "unix:///nonexistent/trainimg/docker.sock", 1);
  auto why = docker_daemon_unavailable();
  ::setenv("DOCKER_HOST", "tcp://127.0.0.1:2375", 1);
  auto tcp = docker_daemon_unavailable();
  if (saved)
    ::setenv("DOCKER_HOST", saved->c_str(), 1);
  else
    ::unsetenv("DOCKER_HOST");
  ASSERT_TRUE(why.has_value());
  EXPECT_EQ(
      *why,
      "no Docker daemon socket at /nonexistent/trainimg/docker.sock; dockerd:// tests skipped (CI starts "
      "dockerd: .ci/start-services.sh)");
  ASSERT_TRUE(tcp.has_value());
  EXPECT_NE(tcp->find("only unix:///PATH sockets are supported"), std::string::npos) << *tcp;
}

}  // namespace
}  // namespace trainimg::inspect::testing
