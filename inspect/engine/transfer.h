// SPDX-License-Identifier: GPL-3.0-or-later
// One HTTP request to the daemon, driven by curl's multi interface so the
// caller pulls the response (engine.h's Stream). Internal to inspect/engine.
#pragma once

#include <curl/curl.h>

#include <exception>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "inspect/curl_util.h"
#include "inspect/engine/engine.h"

namespace trainimg::inspect::engine {

using CurlEasy = curl::Easy;
using CurlMulti = curl::Multi;
using CurlSlist = curl::Slist;

struct Request {
  std::string socket_path;
  std::string method = "GET";  ///< "GET", "POST" or "DELETE"
  std::string url_path;        ///< sent path, version prefix included
  std::string shown_path;      ///< path as messages show it (no version prefix)
  const BodySource* body = nullptr;
  std::vector<std::string> headers;
};

class Transfer final : public Stream {
 public:
  explicit Transfer(Request req);
  ~Transfer() override;
  Transfer(const Transfer&) = delete;
  Transfer& operator=(const Transfer&) = delete;

  size_t read(char* buf, size_t n) override;
  uint64_t bytes_read() const override { return delivered_; }
  /// The final HTTP status; pumps the transfer until the headers are in.
  long status();
  /// A response header by lower-case name; empty when absent.
  std::string header(const std::string& lower_name);
  /// Reads the rest of the body into a string (for small responses).
  std::string read_all();

 private:
  static size_t on_write(char* p, size_t size, size_t n, void* self);
  static size_t on_read(char* p, size_t size, size_t n, void* self);
  static size_t on_header(char* p, size_t size, size_t n, void* self);
  void step();
  void fill();
  [[noreturn]] void throw_transfer_error() const;
  [[noreturn]] void throw_http_error();
  std::string what() const;

  Request req_;
  CurlEasy easy_;
  CurlMulti multi_;
  CurlSlist header_list_;
  bool attached_ = false;
  char errbuf_[CURL_ERROR_SIZE] = {};

  std::string buf_;
  size_t pos_ = 0;
  bool paused_ = false;
  bool done_ = false;
  CURLcode result_ = CURLE_OK;
  std::exception_ptr callback_error_;
  uint64_t received_ = 0;   ///< body bytes curl handed over
  uint64_t delivered_ = 0;  ///< body bytes the caller took
  long status_ = 0;
  bool headers_done_ = false;
  std::map<std::string, std::string> headers_;
};

}  // namespace trainimg::inspect::engine
