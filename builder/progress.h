// SPDX-License-Identifier: GPL-3.0-or-later
// The daemon's POST /build answer: one JSON object per line (docker's
// jsonmessage stream), e.g.
//   {"stream":"Step 3/7 : RUN apt-get update\n"}
//   {"stream":" ---> Running in 1f2e…\n"}
//   {"aux":{"ID":"sha256:…"}}
//   {"errorDetail":{"code":100,"message":"The command … returned a non-zero code: 100"},"error":"…"}
// parsed into events, whatever the chunk boundaries.
#pragma once

#include <functional>
#include <string>
#include <string_view>

namespace trainimg::builder {

struct BuildEvent {
  enum class Kind {
    Step,     ///< "Step N/M : INSTRUCTION": step, steps, text = instruction
    Output,   ///< build output (RUN output, " ---> …" lines, pull status); text
    Error,    ///< the build failed: text = message, code = errorDetail.code (0 unknown)
    ImageId,  ///< the built image: text = "sha256:…"
  };
  Kind kind = Kind::Output;
  int step = 0, steps = 0;
  std::string text;
  int code = 0;
};

class ProgressParser {
 public:
  using Handler = std::function<void(const BuildEvent&)>;
  explicit ProgressParser(Handler h) : handler_(std::move(h)) {}
  /// Feeds response bytes. Throws Error for a line that is not a JSON object.
  void feed(std::string_view bytes);
  /// Parses a last line without newline, if any.
  void finish();

 private:
  void line(std::string_view l);
  Handler handler_;
  std::string pending_;
  std::string partial_output_;  ///< "stream" text not yet ended by '\n'
};

/// Parses "Step 3/7 : RUN x" into (3, 7, "RUN x"); false when `s` is not one.
bool parse_step_line(std::string_view s, int& step, int& steps, std::string& instruction);

}  // namespace trainimg::builder
