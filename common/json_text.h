// SPDX-License-Identifier: GPL-3.0-or-later
// JSON text in, one Error out: every input that reads JSON (image configs and
// manifests, the daemon's answers, host profiles, findings baselines) parses
// through here, so each failure nlohmann can raise is the same one-line,
// positioned error. A syntax error carries its line and column (and the line,
// for the caret display); a number no double holds ("1e999"), which nlohmann
// reports as out_of_range without a position, carries the file alone.
#pragma once

#include <exception>
#include <nlohmann/json.hpp>
#include <string>

#include "common/source_file.h"

namespace trainimg {

/// Throws Error: "FILE:LINE:COL: WHAT: <nlohmann's message>" (`byte` is
/// nlohmann's 1-based position of the failure, 0 when it gave none).
[[noreturn]] void throw_json_error(const SourceFile& src, const std::string& what, const std::string& hint,
                                   const std::exception& e, size_t byte);

[[noreturn]] void throw_json_part_error(const std::string& file, const std::string& what,
                                        const std::exception& e, size_t byte);

/// `src`'s text as JSON (nlohmann::json or ordered_json). `what` leads the
/// message ("invalid JSON", "manifest sha256:…: invalid JSON"); `hint` is
/// the Error's hint.
template <class Json = nlohmann::json>
Json parse_json_text(const SourceFile& src, const std::string& what, const std::string& hint = {}) {
  try {
    return Json::parse(src.text());
  } catch (const nlohmann::json::parse_error& e) {
    throw_json_error(src, what, hint, e, e.byte);
  } catch (const nlohmann::json::exception& e) {  // out_of_range 406 ("1e999"): no position
    throw_json_error(src, what, hint, e, 0);
  }
}

/// JSON that is a part of `file` (an archive member, a registry blob, the
/// daemon's answer), named by `what`: no line to show, so the position is
/// the byte offset in the part: "FILE: WHAT: invalid JSON at byte N: …".
template <class Json = nlohmann::json>
Json parse_json_part(std::string_view text, const std::string& file, const std::string& what) {
  try {
    return Json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    throw_json_part_error(file, what, e, e.byte);
  } catch (const nlohmann::json::exception& e) {  // out_of_range 406 ("1e999"): no position
    throw_json_part_error(file, what, e, 0);
  }
}

}  // namespace trainimg
