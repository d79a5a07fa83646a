// SPDX-License-Identifier: GPL-3.0-or-later
// The squashfs reader (sqsh/) on an arbitrary image in a memfd: super block,
// every compressor (gzip, xz, lzo, lz4, zstd, lzma), tables, one walk reading
// file data (bounded), and a few lookups.
#include "sqsh/sqsh.h"
#include "tests/fuzz/fuzz_support.h"

namespace {
class Reader : public trainimg::sqsh::Visitor {
 public:
  bool entry(const trainimg::sqsh::Node&) override { return budget_ > 0; }
  void content(const trainimg::sqsh::Node&, trainimg::sqsh::FileReader& r) override {
    char buf[4096];
    for (size_t n; budget_ > 0 && (n = r.read(buf, sizeof buf)) > 0;) budget_ -= std::min(budget_, n);
    r.skip(1 << 20);
  }

 private:
  size_t budget_ = 4 << 20;  // bytes of file data per input
};
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace trainimg;
  fuzz::MemFile f(fuzz::as_view(data, size));
  try {
    sqsh::Image img(f.fd(), "fuzz.sqsh");
    Reader r;
    img.walk(r);
    img.stat("/etc/passwd");
    img.list("/");
  } catch (const Error&) {
  }
  return 0;
}
