// SPDX-License-Identifier: GPL-3.0-or-later
// The reuse index reader (builder/import/reuse_index.cc, issue 26) on an
// arbitrary body. The harness frames the input as an index file is
// (builder::frame_reuse_index: the magic, the input, the SHA-256 trailer of
// both and the end mark), so mutations reach the section parser (layers, entries, extents, binding)
// instead of stopping at the digest. The index sits next to an empty file
// standing for the image, whose super block (a default ImageInfo) says its
// tables are empty, so a 'B' section can bind and the reader return.
#include <fcntl.h>

#include <fstream>

#include "builder/import/reuse_index.h"
#include "common/error.h"
#include "common/fd.h"
#include "tests/fuzz/fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace trainimg;
  static fuzz::ScratchDir dir;
  static const std::string image = dir.path() + "/image.sqsh";
  static const bool made = [] {
    std::ofstream(image, std::ios::binary).flush();
    return true;
  }();
  (void)made;
  const std::string file = builder::frame_reuse_index(fuzz::as_view(data, size));
  {
    std::ofstream out(builder::reuse_index_path(image), std::ios::binary | std::ios::trunc);
    out.write(file.data(), static_cast<std::streamsize>(file.size()));
  }
  UniqueFd fd(::open(image.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd) std::abort();
  try {
    builder::ReuseIndex idx = builder::read_reuse_index(image, fd.get(), sqsh::ImageInfo{});
    (void)idx;
  } catch (const Error&) {
  }
  return 0;
}
