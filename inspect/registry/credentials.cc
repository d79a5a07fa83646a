// SPDX-License-Identifier: GPL-3.0-or-later
#include "inspect/registry/credentials.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <vector>

#include "common/error.h"
#include "common/fd.h"

namespace trainimg::inspect::registry {
namespace {

constexpr const char* kDockerHubServer = "https://index.docker.io/v1/";

std::string env_or(const char* name, const std::string& fallback) {
  const char* v = std::getenv(name);
  return v && *v ? std::string(v) : fallback;
}

std::string home() {
  return env_or("HOME", "/");
}

std::string trim(std::string s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.pop_back();
  size_t i = 0;
  while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
  return s.substr(i);
}

// Runs argv with `input` on stdin; returns stdout. Throws Error naming `what`
// (never the output, which holds a secret) when it cannot run or fails.
std::string run_capture(const std::vector<std::string>& argv, const std::string& input,
                        const std::string& what) {
  int in[2], out[2];
  if (pipe2(in, O_CLOEXEC) != 0) throw_errno(what, "pipe");
  UniqueFd in_r(in[0]), in_w(in[1]);
  if (pipe2(out, O_CLOEXEC) != 0) throw_errno(what, "pipe");
  UniqueFd out_r(out[0]), out_w(out[1]);
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = fork();
  if (pid < 0) throw_errno(what, "fork");
  if (pid == 0) {
    dup2(in_r.get(), 0);
    dup2(out_w.get(), 1);
    execvp(args[0], args.data());
    _exit(127);
  }
  in_r.reset();
  out_w.reset();
  // Small input: the helper reads it before answering.
  struct sigaction ign {
  }, old{};
  ign.sa_handler = SIG_IGN;
  sigaction(SIGPIPE, &ign, &old);
  (void)!write(in_w.get(), input.data(), input.size());
  sigaction(SIGPIPE, &old, nullptr);
  in_w.reset();
  std::string output;
  char buf[4096];
  for (;;) {
    ssize_t n = read(out_r.get(), buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    output.append(buf, static_cast<size_t>(n));
    if (output.size() > (1 << 20)) break;
  }
  out_r.reset();
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    throw Error(what, WIFEXITED(status) && WEXITSTATUS(status) == 127
                          ? "cannot run it (not found in PATH?)"
                          : "failed (exit status " +
                                std::to_string(WIFEXITED(status) ? WEXITSTATUS(status) : -1) + ")");
  return output;
}

// enroot's netrc: "machine HOST login USER password PASS" (tokens may span
// lines); PASS may be "$(command …)" up to its closing parenthesis.
std::optional<Credential> from_netrc(const std::string& host, const std::string& user) {
  std::string dir = env_or("ENROOT_CONFIG_PATH", env_or("XDG_CONFIG_HOME", home() + "/.config") + "/enroot");
  std::string path = dir + "/.credentials";
  std::ifstream f(path);
  if (!f) return std::nullopt;
  std::stringstream ss;
  ss << f.rdbuf();
  const std::string text = ss.str();
  struct Machine {
    std::string host, login, password;
    bool is_default = false;
  };
  std::vector<Machine> ms;
  size_t i = 0;
  auto next_token = [&]() -> std::string {
    while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
    if (i >= text.size()) return {};
    if (text.compare(i, 2, "$(") == 0) {  // a command: up to the matching ')'
      size_t depth = 0, start = i;
      for (; i < text.size(); ++i) {
        if (text[i] == '(') ++depth;
        if (text[i] == ')' && --depth == 0) {
          ++i;
          return text.substr(start, i - start);
        }
      }
      throw Error(path, "a password '$(' without its closing ')'");
    }
    size_t start = i;
    while (i < text.size() && !std::isspace(static_cast<unsigned char>(text[i]))) ++i;
    return text.substr(start, i - start);
  };
  for (std::string t = next_token(); !t.empty(); t = next_token()) {
    if (t == "machine") {
      ms.push_back({next_token(), "", "", false});
    } else if (t == "default") {
      ms.push_back({"", "", "", true});
    } else if ((t == "login" || t == "password") && !ms.empty()) {
      (t == "login" ? ms.back().login : ms.back().password) = next_token();
    } else if (t == "account" || t == "macdef") {
      next_token();
    }
  }
  for (bool want_default : {false, true})
    for (const auto& m : ms) {
      if (want_default ? !m.is_default : m.host != host) continue;
      if (!user.empty() && m.login != user) continue;
      Credential c;
      c.user = m.login;
      c.password = m.password;
      c.origin = path;
      if (c.password.starts_with("$(")) {
        std::string cmd = c.password.substr(2, c.password.size() - 3);
        c.password =
            trim(run_capture({"/bin/sh", "-c", cmd}, "", path + ": the password command for " + host));
      }
      return c;
    }
  return std::nullopt;
}

Credential from_helper(const std::string& helper, const std::string& server, const std::string& origin) {
  std::string exe = "docker-credential-" + helper;
  std::string out = run_capture({exe, "get"}, server, exe + " get (" + origin + ")");
  auto j = nlohmann::json::parse(out, nullptr, false);
  if (!j.is_object())
    throw Error(exe + " get", "the helper's answer for " + server + " is not a JSON object");
  Credential c;
  c.origin = exe;
  std::string user = j.value("Username", ""), secret = j.value("Secret", "");
  if (user == "<token>")
    c.identity_token = secret;
  else {
    c.user = user;
    c.password = secret;
  }
  return c;
}

std::optional<Credential> from_docker_config(const std::string& host) {
  std::string dir = env_or("DOCKER_CONFIG", home() + "/.docker");
  std::string path = dir + "/config.json";
  std::ifstream f(path);
  if (!f) return std::nullopt;
  std::stringstream ss;
  ss << f.rdbuf();
  auto j = nlohmann::json::parse(ss.str(), nullptr, false);
  if (!j.is_object()) throw Error(path, "not a JSON object");
  const bool hub = host == "registry-1.docker.io" || host == "index.docker.io" || host == "docker.io";
  const std::string server = hub ? kDockerHubServer : host;
  if (j.contains("credHelpers") && j["credHelpers"].is_object()) {
    for (const auto& key : {server, host})
      if (j["credHelpers"].contains(key) && j["credHelpers"][key].is_string())
        return from_helper(j["credHelpers"][key].get<std::string>(), server, path);
  }
  if (j.contains("auths") && j["auths"].is_object()) {
    const std::vector<std::string> keys =
        hub ? std::vector<std::string>{kDockerHubServer, "docker.io", "index.docker.io"}
            : std::vector<std::string>{host, "https://" + host, "http://" + host, "https://" + host + "/v1/",
                                       "https://" + host + "/v2/"};
    for (const auto& key : keys) {
      if (!j["auths"].contains(key) || !j["auths"][key].is_object()) continue;
      const auto& a = j["auths"][key];
      Credential c;
      c.origin = path;
      if (a.contains("identitytoken") && a["identitytoken"].is_string() &&
          !a["identitytoken"].get<std::string>().empty()) {
        c.identity_token = a["identitytoken"].get<std::string>();
        return c;
      }
      if (a.contains("auth") && a["auth"].is_string() && !a["auth"].get<std::string>().empty()) {
        auto plain = base64_decode(a["auth"].get<std::string>());
        if (!plain || plain->find(':') == std::string::npos)
          throw Error(path, "auths[\"" + key + "\"].auth is not base64 of USER:PASSWORD");
        c.user = plain->substr(0, plain->find(':'));
        c.password = plain->substr(plain->find(':') + 1);
        return c;
      }
      if (a.contains("username") && a["username"].is_string()) {
        c.user = a["username"].get<std::string>();
        c.password = a.value("password", "");
        return c;
      }
    }
  }
  if (j.contains("credsStore") && j["credsStore"].is_string() && !j["credsStore"].get<std::string>().empty())
    return from_helper(j["credsStore"].get<std::string>(), server, path);
  return std::nullopt;
}

}  // namespace

std::optional<Credential> find_credentials(const std::string& host, const std::string& user) {
  if (auto c = from_netrc(host, user)) return c;
  return from_docker_config(host);
}

std::string base64_encode(const std::string& s) {
  static const char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  size_t i = 0;
  for (; i + 2 < s.size(); i += 3) {
    uint32_t v = (uint8_t(s[i]) << 16) | (uint8_t(s[i + 1]) << 8) | uint8_t(s[i + 2]);
    for (int k = 18; k >= 0; k -= 6) out += kAlphabet[(v >> k) & 63];
  }
  if (i < s.size()) {
    uint32_t v = uint8_t(s[i]) << 16;
    if (i + 1 < s.size()) v |= uint8_t(s[i + 1]) << 8;
    out += kAlphabet[(v >> 18) & 63];
    out += kAlphabet[(v >> 12) & 63];
    out += i + 1 < s.size() ? kAlphabet[(v >> 6) & 63] : '=';
    out += '=';
  }
  return out;
}

std::optional<std::string> base64_decode(const std::string& s) {
  std::string out;
  uint32_t v = 0;
  int bits = 0;
  for (char c : s) {
    int d;
    if (c >= 'A' && c <= 'Z')
      d = c - 'A';
    else if (c >= 'a' && c <= 'z')
      d = c - 'a' + 26;
    else if (c >= '0' && c <= '9')
      d = c - '0' + 52;
    else if (c == '+' || c == '-')
      d = 62;
    else if (c == '/' || c == '_')
      d = 63;
    else if (c == '=' || c == '\n' || c == '\r')
      continue;
    else
      return std::nullopt;
    v = (v << 6) | uint32_t(d);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out += char((v >> bits) & 0xff);
    }
  }
  return out;
}

}  // namespace trainimg::inspect::registry
