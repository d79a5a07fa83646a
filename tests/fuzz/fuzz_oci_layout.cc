// SPDX-License-Identifier: GPL-3.0-or-later
// OCI image layouts through the whole `inspect` pipeline. The input is a
// list of parts separated by "\n--part--\n": index.json, then blobs (image
// index or manifest, config, layers). Part N>0 is written to
// blobs/sha256/<its sha256>; in index.json and every blob, "@DN@" is
// replaced by "sha256:<hex of part N>" and "@SN@" by its size, so that
// mutations reach the parsers behind the digest checks. An oci-layout file
// is written unless the input starts with '!'.
#include <fstream>

#include "inspect/inspect.h"
#include "tests/fuzz/fuzz_support.h"

namespace {
void write(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace trainimg;
  static fuzz::ScratchDir dir;
  dir.clear();
  std::string_view in = fuzz::as_view(data, size);
  bool layout_file = in.empty() || in[0] != '!';
  if (!layout_file) in.remove_prefix(1);
  std::vector<std::string> parts;
  for (auto p : fuzz::split(in, "\n--part--\n")) parts.emplace_back(p);
  if (parts.size() > 16) return 0;
  // Blobs refer to later blobs (index -> manifest -> config, layers).
  std::vector<std::string> digest = fuzz::link_parts(parts);
  std::filesystem::create_directories(dir.path() + "/blobs/sha256");
  if (layout_file) write(dir.path() + "/oci-layout", "{\"imageLayoutVersion\": \"1.0.0\"}");
  write(dir.path() + "/index.json", parts[0]);
  for (size_t i = 1; i < parts.size(); ++i)
    write(dir.path() + "/blobs/sha256/" + digest[i].substr(7), parts[i]);
  try {
    inspect::inspect_image("oci:" + dir.path(), {});
  } catch (const Error&) {
  }
  return 0;
}
