// SPDX-License-Identifier: GPL-3.0-or-later
// The fallbacks of the reader interface of inspect/sources/source.h:
// read-and-drop for readers that cannot seek, read-into-scratch for those
// that hold no bytes; and the default of ImageSource::walk_layer (none).
#include <algorithm>

#include "common/error.h"
#include "inspect/sources/source.h"

namespace trainimg::inspect {

uint64_t ContentReader::skip(uint64_t n) {
  char buf[65536];
  uint64_t done = 0;
  while (done < n) {
    size_t got = read(buf, static_cast<size_t>(std::min<uint64_t>(sizeof buf, n - done)));
    if (got == 0) break;
    done += got;
  }
  return done;
}

std::string_view ContentReader::read_view(std::span<char> scratch) {
  return {scratch.data(), read(scratch.data(), scratch.size())};
}

void ImageSource::walk_layer(size_t i, LayerVisitor& v) {
  (void)v;
  throw Error(describe().reference, "layer " + std::to_string(i) + " cannot be read on its own");
}

}  // namespace trainimg::inspect
