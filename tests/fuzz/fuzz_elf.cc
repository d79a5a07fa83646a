// SPDX-License-Identifier: GPL-3.0-or-later
// The bounded ELF reader (inspect/elf) on arbitrary bytes, read in chunks.
#include "inspect/elf/elf_reader.h"
#include "tests/fuzz/fuzz_support.h"

namespace {
class ChunkReader : public trainimg::inspect::ContentReader {
 public:
  ChunkReader(std::string_view s, size_t chunk) : s_(s), chunk_(chunk) {}
  size_t read(char* buf, size_t n) override {
    size_t k = std::min({n, chunk_, s_.size()});
    std::copy_n(s_.data(), k, buf);
    s_.remove_prefix(k);
    return k;
  }

 private:
  std::string_view s_;
  size_t chunk_;
};
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace trainimg;
  if (size < 1) return 0;
  // The first byte picks the chunk size the reader is fed in.
  size_t chunk = size_t{1} << (data[0] % 17);
  ChunkReader r(fuzz::as_view(data + 1, size - 1), chunk);
  inspect::elf::ElfOptions opt;
  opt.markers = {"NCCL version ", "libfabric ", "GLIBC_"};
  opt.max_prefix = 1 << 20;
  try {
    inspect::elf::read_elf(r, opt);
  } catch (const Error&) {
  }
  return 0;
}
