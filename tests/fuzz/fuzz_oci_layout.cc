// SPDX-License-Identifier: GPL-3.0-or-later
// OCI image layouts through the whole `inspect` pipeline. The input is a
// list of parts separated by "\n--part--\n": index.json, then blobs (image
// index or manifest, config, layers). Part N>0 is written to
// blobs/sha256/<its sha256>; in index.json and every blob, "@DN@" is
// replaced by "sha256:<hex of part N>" and "@SN@" by its size, so that
// mutations reach the parsers behind the digest checks. An oci-layout file
// is written unless the input starts with '!'.
#include <openssl/sha.h>

#include <fstream>

#include "inspect/inspect.h"
#include "tests/fuzz/fuzz_support.h"

namespace {
std::string sha256_hex(std::string_view s) {
  unsigned char md[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(s.data()), s.size(), md);
  static const char* hex = "0123456789abcdef";
  std::string out;
  for (unsigned char c : md) {
    out += hex[c >> 4];
    out += hex[c & 15];
  }
  return out;
}

void replace_all(std::string& s, const std::string& from, const std::string& to) {
  for (size_t at = 0; (at = s.find(from, at)) != std::string::npos; at += to.size())
    s.replace(at, from.size(), to);
}

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
  // Blobs refer to later blobs (index -> manifest -> config, layers): fill in
  // from the last part backwards.
  std::vector<std::string> hex(parts.size());
  for (size_t i = parts.size(); i-- > 1;) {
    for (size_t j = i + 1; j < parts.size(); ++j) {
      replace_all(parts[i], "@D" + std::to_string(j) + "@", "sha256:" + hex[j]);
      replace_all(parts[i], "@S" + std::to_string(j) + "@", std::to_string(parts[j].size()));
    }
    hex[i] = sha256_hex(parts[i]);
  }
  for (size_t j = 1; j < parts.size(); ++j) {
    replace_all(parts[0], "@D" + std::to_string(j) + "@", "sha256:" + hex[j]);
    replace_all(parts[0], "@S" + std::to_string(j) + "@", std::to_string(parts[j].size()));
  }
  std::filesystem::create_directories(dir.path() + "/blobs/sha256");
  if (layout_file) write(dir.path() + "/oci-layout", "{\"imageLayoutVersion\": \"1.0.0\"}");
  write(dir.path() + "/index.json", parts[0]);
  for (size_t i = 1; i < parts.size(); ++i) write(dir.path() + "/blobs/sha256/" + hex[i], parts[i]);
  try {
    inspect::inspect_image("oci:" + dir.path(), {});
  } catch (const Error&) {
  }
  return 0;
}
