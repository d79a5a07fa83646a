// SPDX-License-Identifier: GPL-3.0-or-later
#include "inspect/registry/reference.h"

#include <cctype>

#include "common/error.h"
#include "common/sha256.h"

namespace trainimg::inspect::registry {
namespace {

constexpr const char* kDockerHub = "registry-1.docker.io";

[[noreturn]] void bad(const std::string& text, size_t pos, const std::string& why) {
  throw Error(
      "docker://" + text,
      "invalid registry reference: " + why + " (at character " + std::to_string(pos + 1) + ")",
      "expected docker://[USER@][REGISTRY#]IMAGE[:TAG|@sha256:DIGEST] or docker://REGISTRY/IMAGE[:TAG]");
}

// enroot's image charset: lower-case letters, digits, '/', '.', '_', '-'.
bool image_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '/' || c == '.' || c == '_' || c == '-';
}
bool tag_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-';
}
bool registry_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == ':' || c == '[' ||
         c == ']';
}

}  // namespace

std::string Reference::str() const {
  std::string s = registry + "/" + repository;
  if (!tag.empty()) s += ":" + tag;
  if (!digest.empty()) s += "@" + digest;
  return s;
}

Reference parse_reference(const std::string& text) {
  Reference r;
  if (text.empty()) bad(text, 0, "empty reference");
  for (size_t i = 0; i < text.size(); ++i)
    if (std::isspace(static_cast<unsigned char>(text[i])) ||
        std::iscntrl(static_cast<unsigned char>(text[i])))
      bad(text, i, "white space or a control character");
  std::string rest = text;
  size_t offset = 0;  // of `rest` in `text`, for positions

  // A trailing @sha256:<hex> is always a digest.
  if (auto at = rest.rfind('@'); at != std::string::npos && rest.compare(at + 1, 7, "sha256:") == 0) {
    std::string d = rest.substr(at + 1);
    if (!is_sha256_digest(d)) bad(text, at + 1, "a digest is sha256: followed by 64 lower-case hex digits");
    r.digest = d;
    rest.resize(at);
  }
  if (auto hash = rest.find('#'); hash != std::string::npos) {
    // enroot's form: [USER@]REGISTRY#IMAGE
    std::string head = rest.substr(0, hash);
    if (auto at = head.rfind('@'); at != std::string::npos) {
      r.user = head.substr(0, at);
      if (r.user.empty()) bad(text, 0, "empty user before '@'");
      head = head.substr(at + 1);
    }
    if (head.empty()) bad(text, hash, "empty registry before '#'");
    size_t head_pos = hash - head.size();
    for (size_t i = 0; i < head.size(); ++i)
      if (!registry_char(head[i]))
        bad(text, head_pos + i, std::string("'") + head[i] + "' in the registry name");
    r.registry = head;
    offset = hash + 1;
    rest = rest.substr(hash + 1);
    if (rest.find('#') != std::string::npos) bad(text, offset + rest.find('#'), "a second '#'");
  } else {
    // enroot's USER@IMAGE without a registry.
    if (auto at = rest.find('@'); at != std::string::npos) {
      r.user = rest.substr(0, at);
      if (r.user.empty()) bad(text, 0, "empty user before '@'");
      offset = at + 1;
      rest = rest.substr(at + 1);
    }
    // Docker's normalisation: a first component with '.' or ':' or "localhost" is a registry.
    if (auto slash = rest.find('/'); slash != std::string::npos) {
      std::string first = rest.substr(0, slash);
      if (first.find_first_of(".:") != std::string::npos || first == "localhost") {
        for (size_t i = 0; i < first.size(); ++i)
          if (!registry_char(first[i]))
            bad(text, offset + i, std::string("'") + first[i] + "' in the registry name");
        r.registry = first;
        offset += slash + 1;
        rest = rest.substr(slash + 1);
      }
    }
  }
  // IMAGE[:TAG]: the tag is after the last ':' (no '/' may follow it).
  if (auto colon = rest.rfind(':'); colon != std::string::npos) {
    r.tag = rest.substr(colon + 1);
    if (r.tag.empty()) bad(text, offset + colon, "empty tag after ':'");
    if (r.tag.size() > 128) bad(text, offset + colon + 1, "a tag has at most 128 characters");
    for (size_t i = 0; i < r.tag.size(); ++i)
      if (!tag_char(r.tag[i]))
        bad(text, offset + colon + 1 + i, std::string("'") + r.tag[i] + "' in the tag");
    rest.resize(colon);
  }
  if (rest.empty()) bad(text, offset, "no image name");
  for (size_t i = 0; i < rest.size(); ++i)
    if (!image_char(rest[i]))
      bad(text, offset + i,
          std::string("'") + rest[i] +
              "' in the image name (lower-case letters, digits, '/', '.', '_', '-')");
  if (rest.front() == '/' || rest.back() == '/' || rest.find("//") != std::string::npos)
    bad(text, offset, "empty path component in the image name");
  r.repository = rest;
  if (r.registry.empty() || r.registry == "docker.io" || r.registry == "index.docker.io")
    r.registry = kDockerHub;
  if (r.registry == kDockerHub && r.repository.find('/') == std::string::npos)
    r.repository = "library/" + r.repository;
  if (r.tag.empty() && r.digest.empty()) r.tag = "latest";
  return r;
}

}  // namespace trainimg::inspect::registry
