// SPDX-License-Identifier: GPL-3.0-or-later
#include "inspect/registry/client.h"

#include <curl/curl.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdlib>
#include <exception>
#include <fstream>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>
#include <vector>

#include "common/error.h"
#include "inspect/curl_util.h"
#include "inspect/registry/credentials.h"
#include "inspect/registry/parse.h"
#include "common/sha256.h"

namespace trainimg::inspect::registry {
namespace {

constexpr size_t kMaxManifest = 16 << 20;
constexpr size_t kMaxErrorBody = 64 << 10;
constexpr const char* kAccept =
    "Accept: application/vnd.oci.image.index.v1+json, application/vnd.oci.image.manifest.v1+json, "
    "application/vnd.docker.distribution.manifest.list.v2+json, "
    "application/vnd.docker.distribution.manifest.v2+json";

using CurlEasy = curl::Easy;
using CurlSlist = curl::Slist;
using curl::global_init;
using curl::lower;
using curl::trim;

std::string escape(const std::string& s) {
  std::string out;
  for (unsigned char c : s) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~')
      out += char(c);
    else {
      static const char kHex[] = "0123456789ABCDEF";
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

// The system bundle plus SSL_CERT_FILE and TRAINIMG_CA_BUNDLE, as one PEM
// blob; empty when there is nothing to add to libcurl's default.
std::string ca_bundle() {
  std::string extra;
  for (const char* var : {"SSL_CERT_FILE", "TRAINIMG_CA_BUNDLE"}) {
    const char* p = std::getenv(var);
    if (!p || !*p) continue;
    std::ifstream f(p);
    if (!f) throw Error(p, std::string("cannot read the CA bundle that ") + var + " names");
    std::stringstream ss;
    ss << f.rdbuf();
    extra += ss.str() + "\n";
  }
  if (extra.empty()) return {};
  std::string all;
  for (const char* sys : {"/etc/ssl/certs/ca-certificates.crt", "/etc/pki/tls/certs/ca-bundle.crt"}) {
    std::ifstream f(sys);
    if (!f) continue;
    std::stringstream ss;
    ss << f.rdbuf();
    all = ss.str() + "\n";
    break;
  }
  return all + extra;
}

bool retryable_status(long s) {
  return s == 408 || s == 429 || s >= 500;
}

bool retryable_curl(CURLcode rc) {
  switch (rc) {
    case CURLE_COULDNT_CONNECT:
    case CURLE_OPERATION_TIMEDOUT:
    case CURLE_PARTIAL_FILE:
    case CURLE_RECV_ERROR:
    case CURLE_SEND_ERROR:
    case CURLE_GOT_NOTHING:
    case CURLE_HTTP2:
    case CURLE_HTTP2_STREAM: return true;
    default: return false;
  }
}

bool tls_failure(CURLcode rc) {
  return rc == CURLE_SSL_CONNECT_ERROR || rc == CURLE_PEER_FAILED_VERIFICATION ||
         rc == CURLE_SSL_CACERT_BADFILE || rc == CURLE_SSL_CERTPROBLEM || rc == CURLE_SSL_CIPHER;
}

// One request's state for the callbacks.
struct Call {
  const std::function<void(std::string_view)>* sink = nullptr;
  const std::function<void()>* restart = nullptr;
  bool resuming = false;  // a Range was asked for
  long status = 0;
  std::map<std::string, std::string> headers;
  std::string body;  // the whole body without a sink; an error body (capped) otherwise
  size_t body_cap = kMaxErrorBody;
  uint64_t delivered = 0;
  bool first_write = true;
  std::exception_ptr error;

  bool ok() const { return status >= 200 && status < 300; }

  static size_t on_header(char* p, size_t size, size_t n, void* self_ptr) {
    auto* self = static_cast<Call*>(self_ptr);
    std::string_view line(p, size * n);
    if (line.starts_with("HTTP/")) {
      self->headers.clear();
      auto sp = line.find(' ');
      self->status =
          sp == std::string_view::npos ? 0 : std::atol(std::string(line.substr(sp + 1, 3)).c_str());
    } else if (auto colon = line.find(':'); colon != std::string_view::npos) {
      self->headers[lower(std::string(line.substr(0, colon)))] = trim(line.substr(colon + 1));
    }
    return size * n;
  }

  static size_t on_write(char* p, size_t size, size_t n, void* self_ptr) {
    auto* self = static_cast<Call*>(self_ptr);
    size_t len = size * n;
    try {
      if (self->sink && self->ok()) {
        if (self->first_write) {
          self->first_write = false;
          // Asked to resume but given the whole blob: start over.
          if (self->resuming && self->status != 206 && self->restart) (*self->restart)();
        }
        (*self->sink)(std::string_view(p, len));
        self->delivered += len;
      } else {
        if (self->body.size() + len > self->body_cap) {
          if (!self->ok()) return len;  // an error page: the head is enough
          throw Error("", "the response is larger than " + std::to_string(self->body_cap) + " bytes");
        }
        self->body.append(p, len);
      }
    } catch (...) {
      self->error = std::current_exception();
      return 0;
    }
    return len;
  }
};

template <typename T>
void setopt(CURL* h, CURLoption opt, T value) {
  CURLcode rc = curl_easy_setopt(h, opt, value);
  if (rc != CURLE_OK)
    throw Error("", std::string("libcurl: setting an option failed: ") + curl_easy_strerror(rc));
}

}  // namespace

bool allow_http_from_env() {
  const char* t = std::getenv("TRAINIMG_ALLOW_HTTP");
  const char* e = std::getenv("ENROOT_ALLOW_HTTP");
  return (t && std::string(t) == "1") || (e && *e);
}

struct Client::Impl {
  const Reference& ref;
  ClientOptions opt;
  bool allow_http = allow_http_from_env();
  std::string ca = ca_bundle();

  std::mutex mu;
  std::string scheme;  // "https" or "http", decided by the first request
  Challenge challenge;
  bool challenged = false;
  struct Token {
    std::string value;
    std::chrono::steady_clock::time_point expiry;
  };
  std::map<std::string, Token> tokens;  // per scope
  std::optional<std::optional<Credential>> creds;

  explicit Impl(const Reference& r, ClientOptions o) : ref(r), opt(o) { global_init(); }

  std::string name() const { return "docker://" + ref.registry + "/" + ref.repository; }
  std::string scope() const { return "repository:" + ref.repository + ":pull"; }

  std::mutex creds_mu;
  const std::optional<Credential>& credentials() {
    std::lock_guard<std::mutex> lock(creds_mu);
    if (!creds) creds = find_credentials(ref.registry, ref.user);
    return *creds;
  }

  std::string from_where() {
    const auto& c = credentials();
    return c ? " (credentials from " + c->origin + ")" : " (no credentials configured)";
  }

  // One HTTP exchange, no retries.
  CURLcode perform(const std::string& url, const std::vector<std::string>& headers, Call& call, char* errbuf,
                   const std::string* post = nullptr) {
    CurlEasy easy(curl_easy_init());
    if (!easy) throw Error(name(), "libcurl: cannot allocate a handle");
    CURL* h = easy.get();
    setopt(h, CURLOPT_URL, url.c_str());
    setopt(h, CURLOPT_NOSIGNAL, 1L);
    setopt(h, CURLOPT_ERRORBUFFER, errbuf);
    setopt(h, CURLOPT_CONNECTTIMEOUT, 30L);
    setopt(h, CURLOPT_LOW_SPEED_LIMIT, 1L);
    setopt(h, CURLOPT_LOW_SPEED_TIME, opt.low_speed_seconds);
    setopt(h, CURLOPT_FOLLOWLOCATION, 1L);  // blobs redirect to storage; Authorization stays behind
    setopt(h, CURLOPT_UNRESTRICTED_AUTH, 0L);
    setopt(h, CURLOPT_MAXREDIRS, 10L);
    setopt(h, CURLOPT_PROTOCOLS_STR, allow_http ? "http,https" : "https");
    setopt(h, CURLOPT_REDIR_PROTOCOLS_STR, allow_http ? "http,https" : "https");
    setopt(h, CURLOPT_USERAGENT, "trainimg");
    setopt(h, CURLOPT_BUFFERSIZE, 512L << 10);  // blobs are gigabytes: fewer, bigger reads than 16 KiB
    setopt(h, CURLOPT_ACCEPT_ENCODING, "");
    setopt(h, CURLOPT_HTTP_CONTENT_DECODING, 0L);
    if (!ca.empty()) {
      curl_blob blob{ca.data(), ca.size(), CURL_BLOB_NOCOPY};
      setopt(h, CURLOPT_CAINFO_BLOB, &blob);
    }
    setopt(h, CURLOPT_HEADERFUNCTION, &Call::on_header);
    setopt(h, CURLOPT_HEADERDATA, &call);
    setopt(h, CURLOPT_WRITEFUNCTION, &Call::on_write);
    setopt(h, CURLOPT_WRITEDATA, &call);
    if (post) {
      setopt(h, CURLOPT_POSTFIELDS, post->c_str());
      setopt(h, CURLOPT_POSTFIELDSIZE, long(post->size()));
    }
    CurlSlist list;
    for (const auto& line : headers) {
      curl_slist* next = curl_slist_append(list.get(), line.c_str());
      if (!next) throw std::bad_alloc();
      (void)list.release();
      list.reset(next);
    }
    if (list) setopt(h, CURLOPT_HTTPHEADER, list.get());
    errbuf[0] = 0;
    CURLcode rc = curl_easy_perform(h);
    if (call.error) std::rethrow_exception(call.error);
    return rc;
  }

  // The scheme for this registry: https, or http when allowed and https fails at the TLS level.
  std::string base() {
    std::lock_guard<std::mutex> lock(mu);
    if (!scheme.empty()) return scheme + "://" + ref.registry;
    char errbuf[CURL_ERROR_SIZE];
    Call call;
    CURLcode rc = perform("https://" + ref.registry + "/v2/", {}, call, errbuf);
    if (rc == CURLE_OK) {
      scheme = "https";
    } else if (allow_http) {
      Call plain;
      CURLcode rc2 = perform("http://" + ref.registry + "/v2/", {}, plain, errbuf);
      if (rc2 != CURLE_OK)
        throw Error(name(), "GET /v2/: cannot reach " + ref.registry +
                                " over HTTPS or HTTP: " + (errbuf[0] ? errbuf : curl_easy_strerror(rc2)));
      scheme = "http";
      call = plain;
    } else {
      std::string detail = errbuf[0] ? errbuf : curl_easy_strerror(rc);
      throw Error(name(), "GET /v2/: cannot reach " + ref.registry + " over HTTPS: " + detail,
                  tls_failure(rc)
                      ? "for a private CA set TRAINIMG_CA_BUNDLE=FILE; for a plain-HTTP registry set "
                        "TRAINIMG_ALLOW_HTTP=1 (or ENROOT_ALLOW_HTTP=1)"
                      : "");
    }
    if (call.status == 401 && call.headers.count("www-authenticate")) {
      challenge = parse_challenge(call.headers["www-authenticate"]);
      challenged = true;
    }
    return scheme + "://" + ref.registry;
  }

  // The Authorization header for a request, or "" when anonymous.
  std::string authorization() {
    std::unique_lock<std::mutex> lock(mu);
    if (!challenged) return {};
    if (challenge.scheme == "basic") {
      lock.unlock();
      const auto& c = credentials();
      if (!c || c->password.empty()) return {};
      return "Authorization: Basic " + base64_encode(c->user + ":" + c->password);
    }
    if (challenge.scheme != "bearer") return {};
    auto it = tokens.find(scope());
    if (it != tokens.end() && std::chrono::steady_clock::now() < it->second.expiry)
      return "Authorization: Bearer " + it->second.value;
    Challenge ch = challenge;
    lock.unlock();
    Token t = fetch_token(ch);
    lock.lock();
    tokens[scope()] = t;
    return "Authorization: Bearer " + t.value;
  }

  Token fetch_token(const Challenge& ch) {
    auto realm_it = ch.params.find("realm");
    if (realm_it == ch.params.end() || realm_it->second.empty())
      throw Error(name(), ref.registry + " asks for a Bearer token but names no realm");
    const std::string& realm = realm_it->second;
    if (!realm.starts_with("https://") && !(allow_http && realm.starts_with("http://")))
      throw Error(name(), "the token realm of " + ref.registry + " is not HTTPS: " + realm,
                  "set TRAINIMG_ALLOW_HTTP=1 to allow plain HTTP");
    std::string service = ch.params.count("service") ? ch.params.at("service") : std::string();
    std::string realm_host = realm.substr(realm.find("://") + 3);
    realm_host = realm_host.substr(0, realm_host.find('/'));
    std::optional<Credential> c = credentials();
    if (!c && realm_host != ref.registry) c = find_credentials(realm_host, ref.user);
    Call call;
    call.body_cap = 1 << 20;
    char errbuf[CURL_ERROR_SIZE];
    CURLcode rc;
    std::vector<std::string> headers;
    if (c && !c->identity_token.empty()) {
      std::string form = "grant_type=refresh_token&client_id=trainimg&service=" + escape(service) +
                         "&scope=" + escape(scope()) + "&refresh_token=" + escape(c->identity_token);
      headers.push_back("Content-Type: application/x-www-form-urlencoded");
      rc = perform(realm, headers, call, errbuf, &form);
    } else {
      std::string url = realm + (realm.find('?') == std::string::npos ? "?" : "&") +
                        "service=" + escape(service) + "&scope=" + escape(scope());
      if (c && !c->password.empty())
        headers.push_back("Authorization: Basic " + base64_encode(c->user + ":" + c->password));
      rc = perform(url, headers, call, errbuf);
    }
    if (rc != CURLE_OK)
      throw Error(name(),
                  "token server " + realm_host + ": " + (errbuf[0] ? errbuf : curl_easy_strerror(rc)));
    if (call.status == 401 || call.status == 403)
      throw Error(name(), "token server " + realm_host + ": HTTP " + std::to_string(call.status) +
                              " (unauthorized): wrong or missing credentials for " + ref.registry +
                              from_where());
    if (!call.ok())
      throw Error(name(),
                  "token server " + realm_host + ": HTTP " + std::to_string(call.status) +
                      (registry_message(call.body).empty() ? "" : ": " + registry_message(call.body)));
    TokenReply reply = parse_token_reply(call.body);
    std::string token = reply.token;
    if (token.empty()) throw Error(name(), "token server " + realm_host + ": no token in its answer");
    int64_t expires = reply.expires_in;
    // Renew a little early so a token does not expire in flight.
    expires = std::max<int64_t>(expires - 10, 1);
    return Token{token, std::chrono::steady_clock::now() + std::chrono::seconds(expires)};
  }

  void forget_token() {
    std::lock_guard<std::mutex> lock(mu);
    tokens.erase(scope());
  }

  // GET `path` with retries, auth and (for sinks) resumption. Returns the
  // final successful Call; throws Error otherwise.
  Call get(const std::string& path, std::vector<std::string> headers,
           const std::function<void(std::string_view)>* sink, const std::function<void()>* restart,
           const std::string& what) {
    const std::string url = base() + path;
    uint64_t received = 0;
    std::function<void(std::string_view)> counting;
    if (sink)
      counting = [&](std::string_view d) {
        (*sink)(d);
        received += d.size();
      };
    std::function<void()> restarting = [&] {
      received = 0;
      if (restart) (*restart)();
    };
    bool reauthed = false;
    int delay_ms = opt.backoff_ms;
    for (int attempt = 1;; ++attempt) {
      Call call;
      call.body_cap = sink ? kMaxErrorBody : kMaxManifest;
      call.sink = sink ? &counting : nullptr;
      call.restart = &restarting;
      std::vector<std::string> h = headers;
      if (std::string a = authorization(); !a.empty()) h.push_back(a);
      if (sink && received > 0) {
        h.push_back("Range: bytes=" + std::to_string(received) + "-");
        call.resuming = true;
      }
      char errbuf[CURL_ERROR_SIZE];
      CURLcode rc = perform(url, h, call, errbuf);
      std::string failure;
      int wait_ms = delay_ms;
      if (rc == CURLE_OK && call.ok()) return call;
      if (rc == CURLE_OK && call.status == 401) {
        auto it = call.headers.find("www-authenticate");
        if (!reauthed && it != call.headers.end()) {
          // First challenge, or an expired token: authenticate and go again.
          reauthed = true;
          {
            std::lock_guard<std::mutex> lock(mu);
            challenge = parse_challenge(it->second);
            challenged = true;
          }
          forget_token();
          --attempt;
          continue;
        }
        throw Error(name(), what + ": HTTP 401 (unauthorized) from " + ref.registry +
                                ": wrong or missing credentials" + from_where());
      }
      if (rc == CURLE_OK && !retryable_status(call.status)) {
        std::string msg = registry_message(call.body);
        throw Error(name(), what + ": HTTP " + std::to_string(call.status) + " from " + ref.registry +
                                (msg.empty() ? "" : ": " + msg));
      }
      if (rc == CURLE_OK) {
        failure = "HTTP " + std::to_string(call.status);
        if (auto it = call.headers.find("retry-after"); it != call.headers.end()) {
          char* end = nullptr;
          long s = std::strtol(it->second.c_str(), &end, 10);
          if (end && *end == 0 && s >= 0) wait_ms = int(std::min<long>(s, 60) * 1000);
        }
      } else if (retryable_curl(rc)) {
        failure = errbuf[0] ? errbuf : curl_easy_strerror(rc);
      } else {
        throw Error(name(), what + ": " + (errbuf[0] ? std::string(errbuf) : curl_easy_strerror(rc)) + " (" +
                                ref.registry + ")");
      }
      if (attempt >= opt.max_attempts)
        throw Error(name(), what + ": " + failure + " from " + ref.registry + " after " +
                                std::to_string(attempt) + " attempts" +
                                (sink ? " (" + std::to_string(received) + " bytes received)" : ""));
      std::this_thread::sleep_for(std::chrono::milliseconds(wait_ms));
      delay_ms = std::min(delay_ms * 2, 10000);
    }
  }
};

Client::Client(Reference ref, ClientOptions opt)
    : ref_(std::move(ref)), impl_(std::make_unique<Impl>(ref_, opt)) {}
Client::~Client() = default;

std::string Client::name() const {
  return impl_->name();
}

FetchedManifest Client::get_manifest(const std::string& r) {
  const std::string path = "/v2/" + ref_.repository + "/manifests/" + r;
  Call call = impl_->get(path, {kAccept}, nullptr, nullptr, "GET " + path);
  FetchedManifest m;
  m.body = std::move(call.body);
  m.digest = sha256_digest(m.body);
  auto ct = call.headers.find("content-type");
  m.media_type = ct == call.headers.end() ? "" : trim(ct->second.substr(0, ct->second.find(';')));
  if (r.starts_with("sha256:") && m.digest != r)
    throw Error(name(), "GET " + path + ": digest mismatch: the manifest " + ref_.registry + " sent is " +
                            m.digest + ", the reference pins " + r);
  return m;
}

void Client::get_blob(const std::string& digest, const std::function<void(std::string_view)>& sink,
                      const std::function<void()>& restart) {
  const std::string path = "/v2/" + ref_.repository + "/blobs/" + digest;
  impl_->get(path, {}, &sink, &restart, "GET " + path);
}

}  // namespace trainimg::inspect::registry
