// SPDX-License-Identifier: GPL-3.0-or-later
// `docker save` archives: the first byte picks the path. Even: the archive
// in a memfd through the whole `inspect` pipeline (indexed archive, tar
// layers read in place, merged tree with root-bound symlink resolution, ELF
// and fact readers). Odd: the streaming reader dockerd's /images/get answer
// goes through (manifest.json last, layers replayed), reading every file.
#include "inspect/inspect.h"
#include "inspect/sources/docker_archive_stream.h"
#include "inspect/sources/source.h"
#include "inspect/sources/string_source.h"
#include "tests/fuzz/fuzz_support.h"

namespace {
class Reader : public trainimg::inspect::LayerVisitor {
 public:
  bool entry(const trainimg::inspect::Entry&) override { return budget_ > 0; }
  void content(const trainimg::inspect::Entry&, trainimg::inspect::ContentReader& r) override {
    char buf[4096];
    for (size_t n; budget_ > 0 && (n = r.read(buf, sizeof buf)) > 0;) budget_ -= std::min(budget_, n);
  }

 private:
  size_t budget_ = 4 << 20;
};
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace trainimg;
  if (size < 1) return 0;
  std::string bytes(fuzz::as_view(data + 1, size - 1));
  try {
    if (data[0] % 2 == 0) {
      fuzz::MemFile f(bytes);
      inspect::inspect_image("docker-archive:" + f.path(), {});
    } else {
      inspect::StringSource in(bytes);
      Reader r;
      inspect::read_docker_archive_stream(in, "fuzz.tar", "", &r);
    }
  } catch (const Error&) {
  }
  return 0;
}
