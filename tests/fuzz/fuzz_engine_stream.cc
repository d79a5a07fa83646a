// SPDX-License-Identifier: GPL-3.0-or-later
// The Engine API jsonmessage stream of POST /build (builder/progress.h), fed
// in chunks whose size the first byte picks.
#include "builder/progress.h"
#include "tests/fuzz/fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace trainimg;
  if (size < 1) return 0;
  size_t chunk = 1 + data[0] % 64;
  std::string_view in = fuzz::as_view(data + 1, size - 1);
  size_t events = 0;
  builder::ProgressParser p([&](const builder::BuildEvent& e) { events += e.text.size() + 1; });
  try {
    while (!in.empty()) {
      size_t k = std::min(chunk, in.size());
      p.feed(in.substr(0, k));
      in.remove_prefix(k);
    }
    p.finish();
  } catch (const Error&) {
  }
  int step, steps;
  std::string instruction;
  builder::parse_step_line(fuzz::as_view(data, size), step, steps, instruction);
  return 0;
}
