// SPDX-License-Identifier: GPL-3.0-or-later
// A stopping failure: thrown, caught once in cmd/, rendered, exit 2.
// Findings are never thrown; they are returned as std::vector<Diagnostic>.
#pragma once

#include <stdexcept>
#include <string>

#include "common/diagnostic.h"

namespace trainimg {

class Error : public std::runtime_error {
 public:
  explicit Error(Diagnostic d);
  /// A failure with no position: `file` may be empty.
  Error(std::string file, std::string message, std::string hint = {});
  const Diagnostic& diagnostic() const { return diag_; }

 private:
  Diagnostic diag_;
};

/// Throws Error("file", "action: strerror(errno)") for a failed system call.
[[noreturn]] void throw_errno(const std::string& file, const std::string& action);

}  // namespace trainimg
