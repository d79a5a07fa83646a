// SPDX-License-Identifier: GPL-3.0-or-later
#include "builder/progress.h"

#include <gtest/gtest.h>

#include <vector>

#include "builder/failure_hints.h"
#include "common/error.h"

namespace trainimg::builder {
namespace {

std::vector<BuildEvent> parse_in_chunks(std::string_view stream, size_t chunk) {
  std::vector<BuildEvent> out;
  ProgressParser p([&](const BuildEvent& e) { out.push_back(e); });
  for (size_t i = 0; i < stream.size(); i += chunk) p.feed(stream.substr(i, chunk));
  p.finish();
  return out;
}

// A classic-builder answer as dockerd 20.10 sends it (\r\n between objects).
constexpr std::string_view kFailed =
    "{\"stream\":\"Step 1/3 : FROM base:1\"}\r\n"
    "{\"stream\":\"\\n\"}\r\n"
    "{\"stream\":\" ---\\u003e 189546e2c914\\n\"}\r\n"
    "{\"stream\":\"Step 2/3 : RUN ./efa_installer.sh -y\"}\r\n"
    "{\"stream\":\"\\n\"}\r\n"
    "{\"stream\":\"\\u001b[91mE: Unable to locate package environment-modules\\nE: Unable\"}\r\n"
    "{\"stream\":\" to locate package tcl\\n\\u001b[0m\"}\r\n"
    "{\"errorDetail\":{\"code\":1,\"message\":\"The command '/bin/sh -c ./efa_installer.sh -y' returned a "
    "non-zero code: 1\"},\"error\":\"The command '/bin/sh -c ./efa_installer.sh -y' returned a non-zero code: 1\"}\r\n";

TEST(ProgressParser, StepsOutputAndErrorWhateverTheChunking) {
  for (size_t chunk : {size_t(1), size_t(7), size_t(4096)}) {
    auto ev = parse_in_chunks(kFailed, chunk);
    ASSERT_EQ(ev.size(), 6u) << "chunk " << chunk;
    EXPECT_EQ(ev[0].kind, BuildEvent::Kind::Step);
    EXPECT_EQ(ev[0].step, 1);
    EXPECT_EQ(ev[0].steps, 3);
    EXPECT_EQ(ev[0].text, "FROM base:1");
    EXPECT_EQ(ev[1].kind, BuildEvent::Kind::Output);
    EXPECT_EQ(ev[1].text, " ---> 189546e2c914");
    EXPECT_EQ(ev[2].text, "RUN ./efa_installer.sh -y");
    EXPECT_EQ(ev[2].step, 2);
    EXPECT_EQ(ev[3].text, "E: Unable to locate package environment-modules");
    EXPECT_EQ(ev[4].text, "E: Unable to locate package tcl");  // joined across two messages
    EXPECT_EQ(ev[5].kind, BuildEvent::Kind::Error);
    EXPECT_EQ(ev[5].code, 1);
    EXPECT_EQ(ev[5].text, "The command '/bin/sh -c ./efa_installer.sh -y' returned a non-zero code: 1");
  }
}

TEST(ProgressParser, AuxIdAndPullStatus) {
  auto ev = parse_in_chunks(
      "{\"status\":\"Pulling from library/busybox\",\"id\":\"latest\"}\n"
      "{\"aux\":{\"ID\":\"sha256:abc\"}}\n"
      "{\"stream\":\"Successfully built abc\\n\"}\n",
      5);
  ASSERT_EQ(ev.size(), 3u);
  EXPECT_EQ(ev[0].text, "latest: Pulling from library/busybox");
  EXPECT_EQ(ev[1].kind, BuildEvent::Kind::ImageId);
  EXPECT_EQ(ev[1].text, "sha256:abc");
  EXPECT_EQ(ev[2].text, "Successfully built abc");
}

TEST(ProgressParser, ErrorWithoutDetailUsesTheErrorField) {
  auto ev = parse_in_chunks("{\"error\":\"dockerfile parse error line 3\"}", 100);  // no final newline
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_EQ(ev[0].kind, BuildEvent::Kind::Error);
  EXPECT_EQ(ev[0].text, "dockerfile parse error line 3");
}

TEST(ProgressParser, NonJsonLineIsAnError) {
  ProgressParser p([](const BuildEvent&) {});
  try {
    p.feed("<html>proxy error</html>\n");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "dockerd: the build progress stream has a line that is not a JSON object: "
                           "<html>proxy error</html>");
  }
}

TEST(ParseStepLine, OnlyTheClassicFormat) {
  int s = 0, n = 0;
  std::string text;
  EXPECT_TRUE(parse_step_line("Step 12/30 : ENV A=1", s, n, text));
  EXPECT_EQ(s, 12);
  EXPECT_EQ(n, 30);
  EXPECT_EQ(text, "ENV A=1");
  EXPECT_FALSE(parse_step_line("Step 1 : FROM x", s, n, text));
  EXPECT_FALSE(parse_step_line(" Step 1/2 : FROM x", s, n, text));
}

TEST(FailureHints, SeedTextsMapToTheirRules) {
  auto apt = hint_for_output("E: Unable to locate package environment-modules");
  ASSERT_TRUE(apt);
  EXPECT_EQ(apt->rule_id, "efa-apt-update");
  EXPECT_EQ(hint_for_output("Error: failed to install third-party dependencies, exiting")->rule_id, "efa-apt-update");
  EXPECT_EQ(hint_for_output("Error: unable to detect installed kernels, exiting.")->rule_id, "efa-container-flags");
  EXPECT_EQ(hint_for_output("[x:1] opal_shmem_base_select failed")->rule_id, "mpi-second-install");
  EXPECT_FALSE(hint_for_output("E: Unable to locate package tcl"));
}

}  // namespace
}  // namespace trainimg::builder
