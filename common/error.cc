// SPDX-License-Identifier: GPL-3.0-or-later
#include "common/error.h"

#include <cerrno>
#include <cstring>

namespace trainimg {

static std::string what_of(const Diagnostic& d) {
  std::string loc = d.location();
  return loc.empty() ? d.message : loc + ": " + d.message;
}

Error::Error(Diagnostic d) : std::runtime_error(what_of(d)), diag_(std::move(d)) {}

static Diagnostic plain(std::string file, std::string message, std::string hint) {
  Diagnostic d;
  d.severity = Severity::Error;
  d.file = std::move(file);
  d.message = std::move(message);
  d.hint = std::move(hint);
  return d;
}

Error::Error(std::string file, std::string message, std::string hint)
    : Error(plain(std::move(file), std::move(message), std::move(hint))) {}

void throw_errno(const std::string& file, const std::string& action) {
  int e = errno;
  throw Error(file, action + ": " + std::strerror(e));
}

}  // namespace trainimg
