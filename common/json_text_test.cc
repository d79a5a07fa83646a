// SPDX-License-Identifier: GPL-3.0-or-later
#include "common/json_text.h"

#include <gtest/gtest.h>

#include "common/error.h"

namespace trainimg {
namespace {

std::string error_of(const std::string& text) {
  try {
    parse_json_text(SourceFile("f.json", text), "invalid JSON", "fix it");
  } catch (const Error& e) {
    const Diagnostic& d = e.diagnostic();
    EXPECT_EQ(d.hint, "fix it");
    return d.location() + ": " + d.message + (d.source_line.empty() ? "" : " | " + d.source_line);
  }
  return "no error";
}

TEST(JsonText, ParsesAndKeepsOrderWhenAsked) {
  auto j =
      parse_json_text<nlohmann::ordered_json>(SourceFile("f.json", R"({"b":1,"a":[2]})"), "invalid JSON");
  EXPECT_EQ(j.dump(), R"({"b":1,"a":[2]})");
}

TEST(JsonText, SyntaxErrorsCarryLineColumnAndTheLine) {
  EXPECT_EQ(
      error_of("{\n  \"a\": 1,\n}\n"),
      "f.json:3:1: invalid JSON: syntax error while parsing object key - unexpected '}'; expected string "
      "literal | }");
  EXPECT_EQ(error_of(""),
            "f.json:1:1: invalid JSON: syntax error while parsing value - unexpected end of input; "
            "expected '[', '{', or a literal");
}

// nlohmann reports a number no double holds as out_of_range 406, not as a
// parse error: still one Error (it has no position to give).
TEST(JsonText, ANumberNoDoubleHoldsIsAnErrorWithoutPosition) {
  EXPECT_EQ(error_of(R"({"a": 1e999})"),
            "f.json: invalid JSON: [json.exception.out_of_range.406] number overflow parsing '1e999'");
}

TEST(JsonText, APartOfAFileGivesTheByteOffset) {
  auto msg = [](const std::string& text) {
    try {
      parse_json_part(text, "img.tar", "manifest.json");
    } catch (const Error& e) {
      return e.diagnostic().location() + ": " + e.diagnostic().message;
    }
    return std::string("no error");
  };
  EXPECT_EQ(msg("[1,"),
            "img.tar: manifest.json: invalid JSON at byte 4: [json.exception.parse_error.101] parse error "
            "at line 1, column 4: syntax error while parsing value - unexpected end of input; expected "
            "'[', '{', or a literal");
  EXPECT_EQ(msg("[5e731]"),
            "img.tar: manifest.json: invalid JSON: [json.exception.out_of_range.406] number overflow parsing "
            "'5e731'");
  EXPECT_EQ(parse_json_part("[1]", "img.tar", "manifest.json").dump(), "[1]");
}

}  // namespace
}  // namespace trainimg
