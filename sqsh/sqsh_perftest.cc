// SPDX-License-Identifier: GPL-3.0-or-later
// Benchmark driver for bench/sqsh-list.sh (built with -DTRAINIMG_PERFTESTS=ON,
// never run by ctest):
//   sqsh_perftest gen OUT.sqsh FILES BYTES   write a synthetic NGC-like image
//                                            (enroot layout: lzo, raw data)
//   sqsh_perftest list IMAGE                 full walk, like `unsquashfs -l`
#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "common/error.h"
#include "common/fd.h"
#include "sqsh/sqsh.h"

using namespace trainimg;

namespace {

int gen(const std::string& out, uint64_t files, uint64_t bytes) {
  UniqueFd fd(::open(out.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
  if (!fd) throw_errno(out, "open");
  sqsh::WriterOptions opt;
  opt.compressor = sqsh::Compressor::Lzo;
  opt.compress_data = false;
  opt.block_size = 128 << 10;
  opt.all_root = true;
  opt.mtime = 1700000000;
  sqsh::Writer w(fd.get(), out, opt);
  // NGC-like: /usr/lib/python3/dist-packages/pkgN/sub/modM.py, a few big libs.
  uint64_t per_file = files ? bytes / files : 0;
  std::vector<char> buf(1 << 20);
  uint32_t x = 12345;
  for (auto& c : buf) {
    x ^= x << 13, x ^= x >> 17, x ^= x << 5;
    c = static_cast<char>(x);
  }
  for (uint64_t i = 0; i < files; ++i) {
    sqsh::Node n;
    n.path = "/usr/lib/python3/dist-packages/pkg" + std::to_string(i % 2000) + "/sub" + std::to_string(i % 7) +
             "/deep/mod" + std::to_string(i) + ".py";
    n.mode = 0644;
    n.mtime = 1700000000;
    // Every 1000th file is large, the rest share what is left.
    uint64_t size = (i % 1000 == 0) ? per_file * 900 : per_file / 10;
    w.begin_file(n);
    for (uint64_t off = 0; off < size; off += buf.size()) {
      size_t k = static_cast<size_t>(std::min<uint64_t>(buf.size(), size - off));
      // A different first byte per 128 KiB block: no block or file dedups.
      for (size_t b = 0; b + 16 <= k; b += 128 << 10) {
        uint64_t tag[2] = {i, off + b};
        std::memcpy(buf.data() + b, tag, sizeof tag);
      }
      w.write(buf.data(), k);
    }
    w.end_file();
  }
  uint64_t total = w.finish();
  std::printf("wrote %s: %llu files, %llu bytes of image\n", out.c_str(), static_cast<unsigned long long>(files),
              static_cast<unsigned long long>(total));
  return 0;
}

int list(const std::string& path) {
  struct Count : sqsh::Visitor {
    bool entry(const sqsh::Node& n) override {
      ++entries;
      bytes += n.path.size();
      return false;
    }
    uint64_t entries = 0, bytes = 0;
  } c;
  sqsh::Image img(path);
  img.walk(c);
  std::printf("%llu entries\n", static_cast<unsigned long long>(c.entries));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    std::string mode = argc > 1 ? argv[1] : "";
    if (mode == "gen" && argc == 5) return gen(argv[2], std::strtoull(argv[3], nullptr, 10), std::strtoull(argv[4], nullptr, 10));
    if (mode == "list" && argc == 3) return list(argv[2]);
    std::fprintf(stderr, "usage: sqsh_perftest gen OUT FILES BYTES | list IMAGE\n");
    return 2;
  } catch (const Error& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 2;
  }
}
