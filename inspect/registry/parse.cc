// SPDX-License-Identifier: GPL-3.0-or-later
#include "inspect/registry/parse.h"

#include <cctype>
#include <nlohmann/json.hpp>

#include "inspect/curl_util.h"

namespace trainimg::inspect::registry {

using curl::lower;
using curl::trim;

Challenge parse_challenge(const std::string& h) {
  Challenge c;
  size_t i = 0;
  while (i < h.size() && !std::isspace(static_cast<unsigned char>(h[i]))) ++i;
  c.scheme = lower(h.substr(0, i));
  while (i < h.size()) {
    while (i < h.size() && (std::isspace(static_cast<unsigned char>(h[i])) || h[i] == ',')) ++i;
    size_t eq = h.find('=', i);
    if (eq == std::string::npos) break;
    std::string key = lower(trim(h.substr(i, eq - i)));
    i = eq + 1;
    std::string value;
    if (i < h.size() && h[i] == '"') {
      for (++i; i < h.size() && h[i] != '"'; ++i) {
        if (h[i] == '\\' && i + 1 < h.size()) ++i;
        value += h[i];
      }
      ++i;
    } else {
      while (i < h.size() && h[i] != ',') value += h[i++];
      value = trim(value);
    }
    c.params[key] = value;
  }
  return c;
}

std::string registry_message(const std::string& body) {
  auto j = nlohmann::json::parse(body, nullptr, false);
  if (j.is_object() && j.contains("errors") && j["errors"].is_array() && !j["errors"].empty() &&
      j["errors"][0].is_object()) {
    const auto& e = j["errors"][0];
    // Not value(): it throws nlohmann's type_error for a non-string.
    auto str = [&](const char* k) {
      return e.contains(k) && e[k].is_string() ? e[k].get<std::string>() : "";
    };
    std::string code = str("code"), msg = str("message");
    return code.empty() ? msg : msg.empty() ? code : code + ": " + msg;
  }
  if (j.is_object() && j.contains("details") && j["details"].is_string())
    return j["details"].get<std::string>();
  std::string t = trim(body.substr(0, 200));
  for (char& c : t)
    if (std::iscntrl(static_cast<unsigned char>(c))) c = ' ';
  return t.find('<') == std::string::npos ? t : std::string();
}

TokenReply parse_token_reply(const std::string& body) {
  TokenReply r;
  auto j = nlohmann::json::parse(body, nullptr, false);
  for (const char* k : {"access_token", "token"})  // "token" wins when both are given
    if (j.is_object() && j.contains(k) && j[k].is_string() && !j[k].get<std::string>().empty())
      r.token = j[k].get<std::string>();
  if (j.is_object() && j.contains("expires_in") && j["expires_in"].is_number_integer())
    r.expires_in = j["expires_in"].get<int64_t>();
  return r;
}

}  // namespace trainimg::inspect::registry
