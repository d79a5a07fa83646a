// SPDX-License-Identifier: GPL-3.0-or-later
// Internal to inspect/registry: the pure parsers of what a registry and its
// token server send (client.cc uses them), in a header of their own so that
// tests/fuzz/fuzz_registry.cc reaches them without a network. None throws.
#pragma once

#include <cstdint>
#include <map>
#include <string>

namespace trainimg::inspect::registry {

/// WWW-Authenticate: Bearer realm="…",service="…",scope="…"
struct Challenge {
  std::string scheme;                         ///< lower-case: "bearer", "basic"
  std::map<std::string, std::string> params;  ///< keys lower-case
};
Challenge parse_challenge(const std::string& header);

/// The registry's {"errors":[{"code","message"}]} as "CODE: message", a
/// short plain-text body as it is, else "".
std::string registry_message(const std::string& body);

/// A token server's answer: {"token"|"access_token": …, "expires_in": N}.
struct TokenReply {
  std::string token;        ///< empty when the answer holds none
  int64_t expires_in = 60;  ///< seconds (60 when not given)
};
TokenReply parse_token_reply(const std::string& body);

}  // namespace trainimg::inspect::registry
