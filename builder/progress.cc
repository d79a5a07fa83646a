// SPDX-License-Identifier: GPL-3.0-or-later
#include "builder/progress.h"

#include <charconv>
#include <nlohmann/json.hpp>

#include "common/error.h"

namespace trainimg::builder {
namespace {

bool read_int(std::string_view& s, int& out) {
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  if (ec != std::errc() || p == s.data()) return false;
  s.remove_prefix(size_t(p - s.data()));
  return true;
}

std::string string_field(const nlohmann::json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

// The classic builder wraps a RUN's stderr in colour codes (ESC[91m …
// ESC[0m); events carry plain text.
std::string strip_sgr(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\033' && i + 1 < s.size() && s[i + 1] == '[') {
      size_t j = i + 2;
      while (j < s.size() && !(s[j] >= '@' && s[j] <= '~')) ++j;
      i = j;
      continue;
    }
    out += s[i];
  }
  return out;
}

}  // namespace

bool parse_step_line(std::string_view s, int& step, int& steps, std::string& instruction) {
  // The classic builder's format: "Step %d/%d : %s".
  if (!s.starts_with("Step ")) return false;
  s.remove_prefix(5);
  if (!read_int(s, step) || !s.starts_with("/")) return false;
  s.remove_prefix(1);
  if (!read_int(s, steps) || !s.starts_with(" : ")) return false;
  s.remove_prefix(3);
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r')) s.remove_suffix(1);
  instruction = std::string(s);
  return true;
}

void ProgressParser::feed(std::string_view bytes) {
  pending_.append(bytes);
  size_t start = 0;
  for (size_t nl; (nl = pending_.find('\n', start)) != std::string::npos; start = nl + 1)
    line(std::string_view(pending_).substr(start, nl - start));
  pending_.erase(0, start);
}

void ProgressParser::finish() {
  if (!pending_.empty()) {
    std::string last = std::move(pending_);
    pending_.clear();
    line(last);
  }
  if (!partial_output_.empty()) {
    BuildEvent e;
    e.text = std::move(partial_output_);
    partial_output_.clear();
    handler_(e);
  }
}

void ProgressParser::line(std::string_view l) {
  while (!l.empty() && (l.back() == '\r' || l.back() == ' ')) l.remove_suffix(1);
  if (l.empty()) return;
  auto j = nlohmann::json::parse(l, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object())
    throw Error("dockerd", "the build progress stream has a line that is not a JSON object: " +
                               std::string(l.substr(0, 200)));
  BuildEvent e;
  if (j.contains("errorDetail") || j.contains("error")) {
    e.kind = BuildEvent::Kind::Error;
    const auto& d = j.contains("errorDetail") && j["errorDetail"].is_object() ? j["errorDetail"] : nlohmann::json();
    e.text = string_field(d, "message");
    if (e.text.empty()) e.text = string_field(j, "error");
    if (d.contains("code") && d["code"].is_number_integer()) e.code = d["code"].get<int>();
    handler_(e);
    return;
  }
  if (j.contains("aux") && j["aux"].is_object()) {
    std::string id = string_field(j["aux"], "ID");
    if (!id.empty()) {
      e.kind = BuildEvent::Kind::ImageId;
      e.text = id;
      handler_(e);
    }
    return;
  }
  std::string text = string_field(j, "stream");
  if (text.empty()) {
    // Pull progress: {"status":"Pulling fs layer","id":"…"}; shown as output.
    std::string status = string_field(j, "status");
    if (status.empty()) return;
    std::string id = string_field(j, "id");
    text = (id.empty() ? "" : id + ": ") + status + "\n";
  }
  partial_output_ += strip_sgr(text);
  size_t start = 0;
  for (size_t nl; (nl = partial_output_.find('\n', start)) != std::string::npos; start = nl + 1) {
    std::string_view one = std::string_view(partial_output_).substr(start, nl - start);
    if (!one.empty() && one.back() == '\r') one.remove_suffix(1);
    BuildEvent out;
    if (parse_step_line(one, out.step, out.steps, out.text)) {
      out.kind = BuildEvent::Kind::Step;
    } else {
      out.text = std::string(one);
    }
    handler_(out);
  }
  partial_output_.erase(0, start);
}

}  // namespace trainimg::builder
