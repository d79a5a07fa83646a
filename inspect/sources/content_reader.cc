// SPDX-License-Identifier: GPL-3.0-or-later
#include <algorithm>

#include "inspect/inspect.h"

namespace trainimg::inspect {

// The fallback for readers that cannot seek: read and drop.
uint64_t ContentReader::skip(uint64_t n) {
  char buf[16384];
  uint64_t done = 0;
  while (done < n) {
    size_t got = read(buf, static_cast<size_t>(std::min<uint64_t>(sizeof buf, n - done)));
    if (got == 0) break;
    done += got;
  }
  return done;
}

}  // namespace trainimg::inspect
