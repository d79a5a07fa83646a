// SPDX-License-Identifier: GPL-3.0-or-later
// A registry client (OCI distribution spec / Docker registry API v2) on
// libcurl: GET /v2/, manifests, blobs. Auth: anonymous, Basic, and the Bearer
// token flow from WWW-Authenticate (realm, service, scope), tokens kept per
// scope until they expire; credentials from credentials.h. HTTPS is verified
// against the system CA store plus SSL_CERT_FILE and TRAINIMG_CA_BUNDLE;
// plain HTTP only when TRAINIMG_ALLOW_HTTP=1 or ENROOT_ALLOW_HTTP is set
// non-empty (then HTTPS is still tried first). Proxies from the usual
// environment variables (libcurl's). A redirect to another host (blob
// storage) never carries the Authorization header (libcurl drops it;
// CURLOPT_UNRESTRICTED_AUTH is never set).
//
// Every failure is a trainimg::Error whose file is "docker://REGISTRY/REPO"
// and whose message names the request and the HTTP status, e.g.
//   GET /v2/ngc/mini/manifests/1: HTTP 401 (unauthorized) from 127.0.0.1:5501
// Secrets never appear in messages. Retries with backoff on 408/429/5xx and
// transfer failures (Retry-After honoured); a blob download resumes with
// Range from the last byte received.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "inspect/registry/reference.h"

namespace trainimg::inspect::registry {

struct ClientOptions {
  int max_attempts = 5;         ///< per request (first try included)
  int backoff_ms = 200;         ///< first retry delay; doubles, capped at 10 s (Retry-After wins)
  long low_speed_seconds = 60;  ///< abort a transfer slower than 1 byte/s for this long
};

struct FetchedManifest {
  std::string body, media_type;
  std::string digest;  ///< sha256 of body, as computed here
};

class Client {
 public:
  /// Nothing is sent until the first request.
  Client(Reference ref, ClientOptions opt = {});
  ~Client();
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  const Reference& reference() const { return ref_; }
  /// "docker://REGISTRY/REPOSITORY": the file of every Error.
  std::string name() const;

  /// GET /v2/REPO/manifests/REF with the Docker schema 2, manifest list, OCI
  /// manifest and OCI index types accepted. When REF is a digest the body's
  /// sha256 must match it (else Error naming both).
  FetchedManifest get_manifest(const std::string& ref);

  /// GET /v2/REPO/blobs/DIGEST, every byte handed to `sink` in order. A
  /// broken transfer is retried with Range from `sink`'s last byte; when the
  /// server ignores Range, `restart` is called and the blob starts over. The
  /// digest and size are checked by the caller (sink sees every byte once).
  void get_blob(const std::string& digest, const std::function<void(std::string_view)>& sink,
                const std::function<void()>& restart);

 private:
  struct Impl;
  Reference ref_;
  std::unique_ptr<Impl> impl_;
};

/// Plain HTTP allowed by the environment (TRAINIMG_ALLOW_HTTP=1, or
/// ENROOT_ALLOW_HTTP non-empty).
bool allow_http_from_env();

}  // namespace trainimg::inspect::registry
