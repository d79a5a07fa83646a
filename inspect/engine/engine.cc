// SPDX-License-Identifier: GPL-3.0-or-later
#include "inspect/engine/engine.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>

#include "common/error.h"
#include "common/json_text.h"
#include "common/version.h"
#include "inspect/engine/transfer.h"

namespace trainimg::inspect::engine {
namespace {

constexpr const char* kDefaultSocket = "/var/run/docker.sock";

Request make_request(const std::string& socket, const std::string& api, std::string method,
                     const std::string& path) {
  Request r;
  r.socket_path = socket;
  r.method = std::move(method);
  r.url_path = api.empty() ? path : "/v" + api + path;
  r.shown_path = path;
  return r;
}

void pump(Stream& s, const Sink& sink) {
  std::string chunk(64 << 10, '\0');
  while (size_t got = s.read(chunk.data(), chunk.size())) sink(std::string_view(chunk.data(), got));
}

nlohmann::json parse_json(const std::string& endpoint, const std::string& path, const std::string& body) {
  return parse_json_part(body, endpoint, "GET " + path + ": the daemon's answer");
}

// The lower of the daemon's and this client's versions (the docker CLI's rule).
std::string negotiate(const std::string& endpoint, const std::string& server) {
  if (server.empty() || !looks_like_version(server))
    throw Error(endpoint, "the daemon did not report its API version (GET /_ping, GET /version)");
  if (compare_versions(server, kMinApiVersion) < 0)
    throw Error(endpoint, "the daemon speaks Engine API " + server + ", older than the minimum " +
                              std::string(kMinApiVersion),
                "upgrade Docker");
  return compare_versions(server, kClientApiVersion) < 0 ? server : std::string(kClientApiVersion);
}

}  // namespace

std::string socket_path_from_env() {
  const char* host = std::getenv("DOCKER_HOST");
  if (!host || !*host) return kDefaultSocket;
  std::string_view h(host);
  if (h.starts_with("unix://") && h.size() > 7) return std::string(h.substr(7));
  throw Error("DOCKER_HOST", "unsupported DOCKER_HOST '" + std::string(h) + "': only unix:///PATH sockets are supported",
              "unset DOCKER_HOST to use /var/run/docker.sock");
}

std::string url_escape(std::string_view s) {
  static const char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : s) {
    if (std::isalnum(c) || c == '-' || c == '.' || c == '_' || c == '~') {
      out += char(c);
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

Engine Engine::connect() { return connect(socket_path_from_env()); }

Engine Engine::connect(const std::string& socket_path) {
  std::string endpoint = "unix://" + socket_path;
  Transfer ping(make_request(socket_path, "", "GET", "/_ping"));
  std::string server = ping.header("api-version");
  (void)ping.read_all();
  if (server.empty()) {
    Transfer version(make_request(socket_path, "", "GET", "/version"));
    auto j = parse_json(endpoint, "/version", version.read_all());
    if (j.is_object() && j.contains("ApiVersion") && j["ApiVersion"].is_string())
      server = j["ApiVersion"].get<std::string>();
  }
  return Engine(socket_path, negotiate(endpoint, server));
}

nlohmann::json Engine::get_json(const std::string& path) const {
  Transfer t(make_request(socket_path_, api_version_, "GET", path));
  return parse_json(endpoint(), path, t.read_all());
}

void Engine::get(const std::string& path, const Sink& sink) const {
  Transfer t(make_request(socket_path_, api_version_, "GET", path));
  pump(t, sink);
}

std::unique_ptr<Stream> Engine::open(const std::string& path) const {
  auto t = std::make_unique<Transfer>(make_request(socket_path_, api_version_, "GET", path));
  t->status();  // an unknown image fails here, before the caller reads a byte
  return t;
}

void Engine::post(const std::string& path, const BodySource& body, const std::vector<std::string>& headers,
                  const Sink& sink) const {
  Request r = make_request(socket_path_, api_version_, "POST", path);
  r.body = body ? &body : nullptr;
  r.headers = headers;
  Transfer t(std::move(r));
  pump(t, sink);
}

std::vector<std::string> Engine::load(const BodySource& tar) const {
  const std::string path = "/images/load?quiet=1";
  std::string reply;
  post(path, tar, {"Content-Type: application/x-tar"}, [&](std::string_view s) { reply += s; });
  // A stream of JSON messages: {"stream": "Loaded image: x:1\n"} or
  // {"errorDetail": {...}, "error": "..."}.
  std::vector<std::string> loaded;
  for (size_t at = 0; at < reply.size();) {
    size_t end = std::min(reply.find('\n', at), reply.size());
    auto j = nlohmann::json::parse(reply.substr(at, end - at), nullptr, /*allow_exceptions=*/false);
    at = end + 1;
    if (!j.is_object()) continue;
    if (j.contains("error")) {
      std::string message = j["error"].is_string() ? j["error"].get<std::string>() : j["error"].dump();
      throw Error(endpoint(), "POST " + path + ": " + message);
    }
    std::string line = j.value("stream", "");
    while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.pop_back();
    for (std::string_view prefix : {"Loaded image: ", "Loaded image ID: "})
      if (line.starts_with(prefix)) loaded.push_back(line.substr(prefix.size()));
  }
  if (loaded.empty()) throw Error(endpoint(), "POST " + path + ": the daemon loaded nothing: " + reply);
  return loaded;
}

void Engine::remove_image(const std::string& name) const {
  const std::string path = "/images/" + url_escape(name) + "?force=1";
  Transfer t(make_request(socket_path_, api_version_, "DELETE", path));
  (void)t.read_all();
}

}  // namespace trainimg::inspect::engine
