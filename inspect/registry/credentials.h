// SPDX-License-Identifier: GPL-3.0-or-later
// Registry credentials, looked up the way enroot and Docker do, never
// printed: enroot's netrc file `$ENROOT_CONFIG_PATH/.credentials` (default
// `${XDG_CONFIG_HOME:-~/.config}/enroot/.credentials`; a password written
// `$(command)` is the command's output, as ECR users write it), then
// Docker's `config.json` (`$DOCKER_CONFIG`, else `~/.docker`): `auths`
// (`auth` = base64 user:password, `identitytoken`), `credHelpers[host]`,
// then `credsStore`, through `docker-credential-NAME get`.
#pragma once

#include <optional>
#include <string>

namespace trainimg::inspect::registry {

struct Credential {
  std::string user, password;
  std::string identity_token;  ///< an OAuth2 refresh token (Docker's identitytoken); then no password
  std::string
      origin;  ///< where it came from, for messages: "~/.config/enroot/.credentials" (never the secret)
};

/// The credential for `host` (a registry or token-server host, port
/// included when not the default). `user`: enroot's USER@, which selects a
/// netrc entry with that login. nullopt when none is configured. Throws Error
/// when a file is malformed or a helper fails (the message names the file or
/// the helper, never the secret).
std::optional<Credential> find_credentials(const std::string& host, const std::string& user = {});

/// Base64 (RFC 4648, padded) of `s`, and its inverse (nullopt on bad input).
std::string base64_encode(const std::string& s);
std::optional<std::string> base64_decode(const std::string& s);

}  // namespace trainimg::inspect::registry
