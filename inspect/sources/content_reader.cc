// SPDX-License-Identifier: GPL-3.0-or-later
// The fallbacks of the two reader interfaces of inspect.h: read-and-drop for
// readers that cannot seek, read-into-scratch for those that hold no bytes.
#include <algorithm>

#include "inspect/inspect.h"

namespace trainimg::inspect {

namespace {

// Reads up to `n` bytes of `r` in kBuffer-byte pieces and drops them;
// returns how many it read (fewer at the end of `r`).
template <size_t kBuffer, typename Reader>
uint64_t read_and_drop(Reader& r, uint64_t n) {
  char buf[kBuffer];
  uint64_t done = 0;
  while (done < n) {
    size_t got = r.read(buf, static_cast<size_t>(std::min<uint64_t>(sizeof buf, n - done)));
    if (got == 0) break;
    done += got;
  }
  return done;
}

}  // namespace

uint64_t ContentReader::skip(uint64_t n) {
  return read_and_drop<16384>(*this, n);
}

uint64_t ByteSource::skip(uint64_t n) {
  return read_and_drop<65536>(*this, n);
}

std::string_view ContentReader::read_view(std::span<char> scratch) {
  return {scratch.data(), read(scratch.data(), scratch.size())};
}

std::string_view ByteSource::read_view(std::span<char> scratch) {
  return {scratch.data(), read(scratch.data(), scratch.size())};
}

}  // namespace trainimg::inspect
