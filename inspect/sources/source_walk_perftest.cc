// SPDX-License-Identifier: GPL-3.0-or-later
// Times one merged-tree walk of an image source, wanting only the kinds of
// files the inspect rules read (small text, .pc, version.json, ld.so.conf*),
// and prints "seconds entries captured". Driven by bench/ (docker-archive vs
// `tar -tf` of its layers; sqsh vs `unsquashfs -l`). With INSPECT=1 it runs
// the whole of `trainimg inspect` but the output instead (for profilers).
//   source_walk_perftest SOURCE [REPEAT]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>

#include "common/error.h"
#include "inspect/inspect.h"
#include "inspect/sources/source.h"
#include "inspect/tree.h"

int main(int argc, char** argv) {
  using namespace trainimg::inspect;
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s SOURCE [REPEAT]\n", argv[0]);
    return 2;
  }
  int repeat = argc > 2 ? std::atoi(argv[2]) : 1;
  auto want = [](const Entry& e) {
    const std::string& p = e.path;
    return e.size < (1 << 20) &&
           (p.ends_with(".pc") || p.ends_with("version.json") || p.starts_with("/etc/ld.so.conf") ||
            p == "/opt/amazon/efa_installed_packages");
  };
  auto capture = [](const Entry&, ContentReader& r) -> nlohmann::json {
    char buf[4096];
    size_t n = 0;
    while (size_t got = r.read(buf, sizeof buf)) n += got;
    return n;
  };
  try {
    for (int i = 0; i < repeat; ++i) {
      auto t0 = std::chrono::steady_clock::now();
      if (const char* full = std::getenv("INSPECT"); full && std::string(full) == "1") {
        trainimg::Report r = inspect_image(argv[1], ImageExpectations{});
        std::chrono::duration<double> d = std::chrono::steady_clock::now() - t0;
        std::printf("%.3f %zu findings\n", d.count(), r.findings.size());
        continue;
      }
      auto src = open_source(argv[1]);
      MergedTree t = build_tree(*src, want, capture);
      std::chrono::duration<double> d = std::chrono::steady_clock::now() - t0;
      std::printf("%.3f %zu %zu\n", d.count(), t.size(), t.captured.size());
    }
  } catch (const trainimg::Error& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 2;
  }
  return 0;
}
