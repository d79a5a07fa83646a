// SPDX-License-Identifier: GPL-3.0-or-later
#include "inspect/engine/transfer.h"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <mutex>
#include <nlohmann/json.hpp>

#include "common/error.h"

namespace trainimg::inspect::engine {
namespace {

// Above this many unread bytes the write callback pauses the transfer, so
// memory stays bounded whatever the response size (a 25 GB image export).
constexpr size_t kHighWater = 1 << 20;
constexpr long kReceiveBuffer = 512L << 10;
// An error body is a short JSON message; anything beyond this is dropped.
constexpr size_t kMaxErrorBody = 64 << 10;

using curl::global_init;
using curl::lower;
using curl::trim;

// The daemon answers errors with {"message": "..."}; older or proxy errors
// may be plain text.
std::string daemon_message(const std::string& body) {
  auto j = nlohmann::json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (j.is_object() && j.contains("message") && j["message"].is_string()) return j["message"].get<std::string>();
  return trim(body);
}

template <typename T>
void setopt(CURL* h, CURLoption opt, T value) {
  CURLcode rc = curl_easy_setopt(h, opt, value);
  if (rc != CURLE_OK) throw Error("", std::string("libcurl: setting an option failed: ") + curl_easy_strerror(rc));
}

}  // namespace

Transfer::Transfer(Request req) : req_(std::move(req)) {
  global_init();
  easy_.reset(curl_easy_init());
  multi_.reset(curl_multi_init());
  if (!easy_ || !multi_) throw Error("unix://" + req_.socket_path, "libcurl: cannot allocate a handle");
  CURL* h = easy_.get();
  setopt(h, CURLOPT_UNIX_SOCKET_PATH, req_.socket_path.c_str());
  // The host name is only the Host header over a unix socket.
  std::string url = "http://localhost" + req_.url_path;
  setopt(h, CURLOPT_URL, url.c_str());
  setopt(h, CURLOPT_NOSIGNAL, 1L);
  setopt(h, CURLOPT_ERRORBUFFER, errbuf_);
  setopt(h, CURLOPT_CONNECTTIMEOUT, 10L);
  setopt(h, CURLOPT_WRITEFUNCTION, &Transfer::on_write);
  setopt(h, CURLOPT_WRITEDATA, this);
  setopt(h, CURLOPT_HEADERFUNCTION, &Transfer::on_header);
  setopt(h, CURLOPT_HEADERDATA, this);
  setopt(h, CURLOPT_USERAGENT, "trainimg");
  // Big reads from the socket: an export or image stream is gigabytes, and
  // curl's 16 KiB default costs a recv and a write callback per 16 KiB.
  setopt(h, CURLOPT_BUFFERSIZE, kReceiveBuffer);
  for (const auto& line : req_.headers) {
    curl_slist* next = curl_slist_append(header_list_.get(), line.c_str());
    if (!next) throw Error("unix://" + req_.socket_path, "libcurl: out of memory");
    (void)header_list_.release();
    header_list_.reset(next);
  }
  if (req_.method == "POST") {
    setopt(h, CURLOPT_POST, 1L);
    if (req_.body) {
      setopt(h, CURLOPT_READFUNCTION, &Transfer::on_read);
      setopt(h, CURLOPT_READDATA, this);
      // Unknown length: chunked. No "Expect: 100-continue" round trip.
      for (const char* line : {"Transfer-Encoding: chunked", "Expect:"}) {
        curl_slist* next = curl_slist_append(header_list_.get(), line);
        if (!next) throw Error("unix://" + req_.socket_path, "libcurl: out of memory");
        (void)header_list_.release();
        header_list_.reset(next);
      }
    } else {
      setopt(h, CURLOPT_POSTFIELDSIZE, 0L);
    }
  }
  if (req_.method == "DELETE") setopt(h, CURLOPT_CUSTOMREQUEST, "DELETE");
  if (header_list_) setopt(h, CURLOPT_HTTPHEADER, header_list_.get());
  if (curl_multi_add_handle(multi_.get(), h) != CURLM_OK)
    throw Error("unix://" + req_.socket_path, "libcurl: cannot start the transfer");
  attached_ = true;
}

Transfer::~Transfer() {
  if (attached_) curl_multi_remove_handle(multi_.get(), easy_.get());
}

std::string Transfer::what() const { return req_.method + " " + req_.shown_path; }

size_t Transfer::on_write(char* p, size_t size, size_t n, void* self_ptr) {
  auto* self = static_cast<Transfer*>(self_ptr);
  size_t len = size * n;
  bool error_status = self->status_ >= 400;
  if (!error_status && self->buf_.size() - self->pos_ >= kHighWater) {
    self->paused_ = true;
    return CURL_WRITEFUNC_PAUSE;  // curl keeps this chunk and offers it again
  }
  try {
    if (!error_status || self->buf_.size() < kMaxErrorBody) self->buf_.append(p, len);
    self->received_ += len;
  } catch (...) {
    self->callback_error_ = std::current_exception();
    return 0;  // not len: curl aborts with CURLE_WRITE_ERROR
  }
  return len;
}

size_t Transfer::on_read(char* p, size_t size, size_t n, void* self_ptr) {
  auto* self = static_cast<Transfer*>(self_ptr);
  try {
    return (*self->req_.body)(p, size * n);
  } catch (...) {
    self->callback_error_ = std::current_exception();
    return CURL_READFUNC_ABORT;
  }
}

size_t Transfer::on_header(char* p, size_t size, size_t n, void* self_ptr) {
  auto* self = static_cast<Transfer*>(self_ptr);
  size_t len = size * n;
  try {
    std::string_view line(p, len);
    if (line.starts_with("HTTP/")) {  // a new response (after a 1xx, the final one)
      self->headers_.clear();
      self->headers_done_ = false;
      auto sp = line.find(' ');
      self->status_ = sp == std::string_view::npos ? 0 : std::atol(std::string(line.substr(sp + 1, 3)).c_str());
    } else if (trim(line).empty()) {
      self->headers_done_ = self->status_ >= 200;
    } else if (auto colon = line.find(':'); colon != std::string_view::npos) {
      self->headers_[lower(std::string(line.substr(0, colon)))] = trim(line.substr(colon + 1));
    }
  } catch (...) {
    self->callback_error_ = std::current_exception();
    return 0;
  }
  return len;
}

void Transfer::step() {
  if (paused_) {
    paused_ = false;
    // May call on_write at once with the chunk it held back.
    curl_easy_pause(easy_.get(), CURLPAUSE_CONT);
    return;
  }
  int running = 0;
  CURLMcode mc = curl_multi_perform(multi_.get(), &running);
  if (mc != CURLM_OK) throw Error("unix://" + req_.socket_path, what() + ": libcurl: " + curl_multi_strerror(mc));
  int left = 0;
  while (CURLMsg* msg = curl_multi_info_read(multi_.get(), &left)) {
    if (msg->msg == CURLMSG_DONE) {
      done_ = true;
      result_ = msg->data.result;
    }
  }
  // Nothing to hand over yet: wait for the socket instead of spinning.
  if (!done_ && !paused_ && pos_ == buf_.size()) curl_multi_poll(multi_.get(), nullptr, 0, 1000, nullptr);
}

void Transfer::throw_transfer_error() const {
  if (callback_error_) std::rethrow_exception(callback_error_);
  std::string detail = errbuf_[0] ? errbuf_ : curl_easy_strerror(result_);
  std::string file = "unix://" + req_.socket_path;
  if (result_ == CURLE_COULDNT_CONNECT || (status_ == 0 && result_ == CURLE_COULDNT_RESOLVE_HOST)) {
    throw Error(file, "cannot connect to the Docker daemon: " + detail,
                "is dockerd running and is the socket readable by this user? Set DOCKER_HOST=unix:///PATH "
                "for another socket");
  }
  if (status_ != 0 || received_ != 0) {
    throw Error(file, "connection to the Docker daemon lost during " + what() + " after " +
                          std::to_string(received_) + " bytes: " + detail,
                "the daemon stopped or restarted mid-stream; nothing was written");
  }
  throw Error(file, what() + ": " + detail);
}

void Transfer::throw_http_error() {
  while (!done_) step();  // collect the (small, capped) error body
  if (callback_error_) std::rethrow_exception(callback_error_);
  std::string message = daemon_message(buf_);
  throw Error("unix://" + req_.socket_path,
              what() + ": HTTP " + std::to_string(status_) + (message.empty() ? "" : ": " + message));
}

void Transfer::fill() {
  while (pos_ == buf_.size()) {
    if (done_) {
      if (result_ != CURLE_OK || callback_error_) throw_transfer_error();
      if (status_ >= 400) throw_http_error();
      return;
    }
    buf_.clear();
    pos_ = 0;
    step();
    if (headers_done_ && status_ >= 400) throw_http_error();
  }
}

long Transfer::status() {
  while (!headers_done_ && !done_) step();
  if (done_ && !headers_done_ && (result_ != CURLE_OK || callback_error_)) throw_transfer_error();
  if (status_ >= 400) throw_http_error();
  return status_;
}

std::string Transfer::header(const std::string& lower_name) {
  status();
  auto it = headers_.find(lower_name);
  return it == headers_.end() ? std::string() : it->second;
}

size_t Transfer::read(char* out, size_t n) {
  if (n == 0) return 0;
  fill();
  size_t take = std::min(n, buf_.size() - pos_);
  std::memcpy(out, buf_.data() + pos_, take);
  pos_ += take;
  delivered_ += take;
  return take;
}

std::string Transfer::read_all() {
  std::string out;
  char chunk[16384];
  while (size_t got = read(chunk, sizeof chunk)) out.append(chunk, got);
  return out;
}

}  // namespace trainimg::inspect::engine
