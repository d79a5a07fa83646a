// SPDX-License-Identifier: GPL-3.0-or-later
// docker:// references: enroot's form with its defaults, Docker's form, and
// one clear error per malformed reference.
#include "inspect/registry/reference.h"

#include <gtest/gtest.h>

#include "common/error.h"

namespace trainimg::inspect::registry {
namespace {

const std::string kHex(64, 'a');

struct Case {
  std::string in, user, registry, repository, tag, digest;
};

TEST(Reference, ParsesBothForms) {
  const Case cases[] = {
      {"ubuntu", "", "registry-1.docker.io", "library/ubuntu", "latest", ""},
      {"ubuntu:24.04", "", "registry-1.docker.io", "library/ubuntu", "24.04", ""},
      {"nvidia/cuda:12.4.1-devel", "", "registry-1.docker.io", "nvidia/cuda", "12.4.1-devel", ""},
      {"nvcr.io#nvidia/pytorch:26.08-py3", "", "nvcr.io", "nvidia/pytorch", "26.08-py3", ""},
      {"$oauthtoken@nvcr.io#nvidia/pytorch:26.08-py3", "$oauthtoken", "nvcr.io", "nvidia/pytorch",
       "26.08-py3", ""},
      {"alice@ubuntu", "alice", "registry-1.docker.io", "library/ubuntu", "latest", ""},
      {"docker.io#ubuntu", "", "registry-1.docker.io", "library/ubuntu", "latest", ""},
      {"127.0.0.1:5500#ngc/mini:1", "", "127.0.0.1:5500", "ngc/mini", "1", ""},
      {"127.0.0.1:5500/ngc/mini:1", "", "127.0.0.1:5500", "ngc/mini", "1", ""},
      {"localhost/x", "", "localhost", "x", "latest", ""},
      {"localhost:5000/a/b/c", "", "localhost:5000", "a/b/c", "latest", ""},
      {"quay.io/org/img@sha256:" + kHex, "", "quay.io", "org/img", "", "sha256:" + kHex},
      {"nvcr.io#nvidia/pytorch:26.08-py3@sha256:" + kHex, "", "nvcr.io", "nvidia/pytorch", "26.08-py3",
       "sha256:" + kHex},
      {"u@reg.example:443#team/img@sha256:" + kHex, "u", "reg.example:443", "team/img", "", "sha256:" + kHex},
      // Without '.', ':' or "localhost" the first component is part of the Hub name.
      {"myorg/img:v1", "", "registry-1.docker.io", "myorg/img", "v1", ""},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.in);
    Reference r = parse_reference(c.in);
    EXPECT_EQ(r.user, c.user);
    EXPECT_EQ(r.registry, c.registry);
    EXPECT_EQ(r.repository, c.repository);
    EXPECT_EQ(r.tag, c.tag);
    EXPECT_EQ(r.digest, c.digest);
  }
  EXPECT_EQ(parse_reference("nvcr.io#nvidia/pytorch:26.08-py3").str(), "nvcr.io/nvidia/pytorch:26.08-py3");
  EXPECT_EQ(parse_reference("quay.io/org/img@sha256:" + kHex).manifest_ref(), "sha256:" + kHex);
  EXPECT_EQ(parse_reference("ubuntu:22.04").manifest_ref(), "22.04");
}

std::string error_of(const std::string& in) {
  try {
    parse_reference(in);
  } catch (const Error& e) {
    return e.diagnostic().message;
  }
  return "no error";
}

TEST(Reference, RefusesMalformedWithPosition) {
  EXPECT_EQ(error_of(""), "invalid registry reference: empty reference (at character 1)");
  EXPECT_EQ(
      error_of("Ubuntu"),
      "invalid registry reference: 'U' in the image name (lower-case letters, digits, '/', '.', '_', '-') "
      "(at character 1)");
  EXPECT_EQ(error_of("nvcr.io#nvidia/pytorch:"),
            "invalid registry reference: empty tag after ':' (at character 23)");
  EXPECT_EQ(error_of("nvcr.io#nvidia/pytorch:a+b"),
            "invalid registry reference: '+' in the tag (at character 25)");
  EXPECT_EQ(error_of("img@sha256:abc"),
            "invalid registry reference: a digest is sha256: followed by 64 lower-case hex digits (at "
            "character 5)");
  EXPECT_EQ(error_of("#img"), "invalid registry reference: empty registry before '#' (at character 1)");
  EXPECT_EQ(error_of("a#b#c"), "invalid registry reference: a second '#' (at character 4)");
  EXPECT_EQ(error_of("reg.io/"), "invalid registry reference: no image name (at character 8)");
  EXPECT_EQ(error_of("a b"),
            "invalid registry reference: white space or a control character (at character 2)");
  EXPECT_EQ(error_of("reg.io//x"),
            "invalid registry reference: empty path component in the image name (at character 8)");
}

TEST(Reference, ErrorNamesTheReferenceAndTheForms) {
  try {
    parse_reference("nvcr.io#Bad");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.diagnostic().file, "docker://nvcr.io#Bad");
    EXPECT_NE(e.diagnostic().hint.find("[USER@][REGISTRY#]IMAGE"), std::string::npos);
  }
}

}  // namespace
}  // namespace trainimg::inspect::registry
