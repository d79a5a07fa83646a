// SPDX-License-Identifier: GPL-3.0-or-later
// A small Docker Engine API client (inspect/engine/), shared by the
// dockerd:// image source, builder/ (builds and the `docker export` import)
// and the test helpers of inspect/testing/ (`docker load`): libcurl over the
// daemon's unix socket (domain.md §5). No `docker` CLI, no temporary files:
// responses are either pushed to a sink (get/post) or pulled (open), and in
// both cases curl is not asked for more bytes until the consumer has taken
// the previous ones, so a slow consumer throttles the daemon instead of
// growing a buffer.
//
// Every failure is a trainimg::Error whose file is the endpoint
// ("unix:///var/run/docker.sock"), and whose message names the request, the
// HTTP status and the daemon's own text (its JSON {"message": …}), e.g.
//   GET /images/nope/json: HTTP 404: No such image: nope:latest
// A daemon that is not there, or a connection dropped mid-stream, is reported
// as such, with the byte count received so far.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace trainimg::inspect {

namespace engine {

/// Receives response bytes in order; may throw (the transfer is then aborted
/// and the exception rethrown from the Engine call).
using Sink = std::function<void(std::string_view)>;
/// Fills up to `n` bytes of a request body; returns 0 at the end. May throw.
using BodySource = std::function<size_t(char* buf, size_t n)>;

/// The highest Engine API version this client speaks; the session uses the
/// lower of this and the daemon's.
inline constexpr std::string_view kClientApiVersion = "1.43";
/// The lowest daemon API version accepted (POST /build `networkmode`, `target`).
inline constexpr std::string_view kMinApiVersion = "1.25";

/// Where the daemon listens: DOCKER_HOST=unix:///path, else
/// /var/run/docker.sock. Throws Error for a DOCKER_HOST this client cannot use
/// (tcp://, ssh://, …) rather than silently ignoring it.
std::string socket_path_from_env();

/// Percent-encodes a query value or path segment (RFC 3986 unreserved kept).
std::string url_escape(std::string_view s);

/// A response being read by the caller (pull). Created by Engine::open.
/// read() throws Error for an HTTP error status (with the daemon's message)
/// or a transfer failure; it returns 0 only after a complete response.
class Stream {
 public:
  virtual ~Stream() = default;
  virtual size_t read(char* buf, size_t n) = 0;
  /// Bytes of body delivered so far.
  virtual uint64_t bytes_read() const = 0;
};

class Engine {
 public:
  /// Connects to socket_path_from_env() and negotiates the API version with
  /// GET /_ping (Api-Version header), falling back to GET /version. Throws
  /// Error when the daemon cannot be reached or is too old.
  static Engine connect();
  /// The same for an explicit socket path.
  static Engine connect(const std::string& socket_path);

  /// The negotiated version, e.g. "1.41"; request paths are sent as /vX.Y/path.
  const std::string& api_version() const { return api_version_; }
  const std::string& socket_path() const { return socket_path_; }
  /// "unix:///var/run/docker.sock": the `file` of every Error this throws.
  std::string endpoint() const { return "unix://" + socket_path_; }

  /// GET `path` (e.g. "/images/x/json", query included) and parse the JSON body.
  nlohmann::json get_json(const std::string& path) const;
  /// GET `path`, streaming the body to `sink` as it arrives.
  void get(const std::string& path, const Sink& sink) const;
  /// GET `path` as a pull stream (for readers such as libarchive's callbacks).
  std::unique_ptr<Stream> open(const std::string& path) const;
  /// POST `path` with a body streamed from `body` (chunked; no length needed)
  /// and extra `headers` ("Content-Type: application/x-tar"); the response is
  /// streamed to `sink`. An exception thrown by `body` or `sink` aborts the
  /// transfer and is rethrown here.
  void post(const std::string& path, const BodySource& body, const std::vector<std::string>& headers,
            const Sink& sink) const;
  /// POST /images/load?quiet=1 with a docker archive (`docker save` output)
  /// streamed from `tar`. Returns what the daemon says it loaded, one entry
  /// per "Loaded image: NAME" or "Loaded image ID: sha256:…" line. An error
  /// the daemon reports inside its 200 answer (it may start answering before
  /// the archive is read) is thrown as an Error too.
  std::vector<std::string> load(const BodySource& tar) const;
  /// DELETE /images/{name}?force=1: removes the tag `name` (and the image
  /// when no other tag holds it, even if a stopped container uses it).
  void remove_image(const std::string& name) const;

 private:
  Engine(std::string socket_path, std::string api_version)
      : socket_path_(std::move(socket_path)), api_version_(std::move(api_version)) {}
  std::string socket_path_;
  std::string api_version_;
};

}  // namespace engine

}  // namespace trainimg::inspect
