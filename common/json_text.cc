// SPDX-License-Identifier: GPL-3.0-or-later
#include "common/json_text.h"

#include "common/error.h"

namespace trainimg {

void throw_json_error(const SourceFile& src, const std::string& what, const std::string& hint,
                      const std::exception& e, size_t byte) {
  Diagnostic d;
  d.file = src.name();
  d.hint = hint;
  std::string msg = e.what();
  // "[json.exception.parse_error.101] parse error at line 1, column 2: syntax error …":
  // the position is given as line:column in front, so only the reason stays.
  if (byte > 0) {
    if (size_t colon = msg.find(": ", msg.find("parse error")); colon != std::string::npos)
      msg = msg.substr(colon + 2);
    auto lc = src.line_col(byte - 1);
    d.line = lc.line;
    d.column = lc.column;
    d.length = 1;
    d.source_line = std::string(src.line_text(lc.line));
  }
  d.message = what + ": " + msg;
  throw Error(d);
}

void throw_json_part_error(const std::string& file, const std::string& what, const std::exception& e,
                           size_t byte) {
  throw Error(file, what + ": invalid JSON" +
                        (byte > 0 ? " at byte " + std::to_string(byte) : std::string()) + ": " + e.what());
}

}  // namespace trainimg
