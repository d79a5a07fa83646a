// SPDX-License-Identifier: GPL-3.0-or-later
// Test helpers: real ELF objects compiled at test time with the system gcc
// (right sonames, exported symbols, strings in .rodata, run paths), and a
// ContentReader over bytes in memory. Header-only; included by *_test.cc;
// TempDir/read_bytes/write_bytes come from inspect/testing/image_builder.h.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "inspect/sources/source.h"
#include "inspect/testing/image_builder.h"

namespace trainimg::inspect::testing {

/// What to build: a shared object (or an executable). Chained setters keep
/// call sites short: ElfSpec().so("libx.so.1").exports({"sym"}).
struct ElfSpec {
  std::string soname_;                 ///< -Wl,-soname (empty: none)
  std::vector<std::string> exports_;   ///< global int objects, e.g. "ncclNetPlugin_v8"
  std::vector<std::string> strings_;   ///< literal strings kept in .rodata
  std::vector<std::string> runpath_;   ///< -rpath entries
  bool new_dtags_ = true;              ///< DT_RUNPATH (true) or DT_RPATH (false)
  std::vector<std::string> link_;      ///< other objects to link (paths): become DT_NEEDED
  std::vector<std::string> needs_;     ///< sonames to need: stub libraries are built for them
  size_t rodata_padding_ = 0;          ///< extra bytes of .rodata, to make files large
  bool executable_ = false;

  ElfSpec& so(std::string v) { soname_ = std::move(v); return *this; }
  ElfSpec& exports(std::vector<std::string> v) { exports_ = std::move(v); return *this; }
  ElfSpec& strings(std::vector<std::string> v) { strings_ = std::move(v); return *this; }
  ElfSpec& runpath(std::vector<std::string> v) { runpath_ = std::move(v); return *this; }
  ElfSpec& rpath(std::vector<std::string> v) { runpath_ = std::move(v); new_dtags_ = false; return *this; }
  ElfSpec& link(std::vector<std::string> v) { link_ = std::move(v); return *this; }
  ElfSpec& needs(std::vector<std::string> v) { needs_ = std::move(v); return *this; }
  ElfSpec& padding(size_t n) { rodata_padding_ = n; return *this; }
  ElfSpec& executable() { executable_ = true; return *this; }
};

/// Compiles `spec` with gcc into `out` (parent directories created). Fails
/// the current test on a compiler error.
inline void build_elf(const std::string& out, const ElfSpec& spec) {
  std::filesystem::create_directories(std::filesystem::path(out).parent_path());
  std::string src = out + ".c";
  std::ostringstream c;
  for (const auto& e : spec.exports_) c << "__attribute__((visibility(\"default\"))) int " << e << " = 1;\n";
  for (size_t i = 0; i < spec.strings_.size(); ++i)
    c << "__attribute__((used)) static const char str" << i << "[] = \"" << spec.strings_[i] << "\";\n";
  if (spec.rodata_padding_)
    c << "__attribute__((used)) static const char pad[" << spec.rodata_padding_ << "] = {1};\n";
  if (spec.executable_) c << "int main(void) { return 0; }\n";
  std::vector<std::string> link = spec.link_;
  for (const auto& soname : spec.needs_) {
    std::string stub = (std::filesystem::path(out).parent_path() / ".stubs" / soname).string();
    if (!std::filesystem::exists(stub)) build_elf(stub, ElfSpec().so(soname));
    link.push_back(stub);
  }
  write_bytes(src, c.str());
  std::string cmd = "gcc -O0 -o '" + out + "' '" + src + "'";
  cmd += spec.executable_ ? " -fPIE -pie" : " -shared -fPIC";
  if (!spec.soname_.empty()) cmd += " -Wl,-soname," + spec.soname_;
  for (const auto& r : spec.runpath_) cmd += " '-Wl,-rpath," + r + "'";
  if (!spec.runpath_.empty()) cmd += spec.new_dtags_ ? " -Wl,--enable-new-dtags" : " -Wl,--disable-new-dtags";
  // --no-as-needed: keep DT_NEEDED even though nothing references the library.
  if (!link.empty()) cmd += " -Wl,--no-as-needed";
  for (const auto& l : link) cmd += " '" + l + "'";
  cmd += " 2>&1";
  int rc = std::system(cmd.c_str());
  std::filesystem::remove(src);
  ASSERT_EQ(rc, 0) << cmd;
}

/// The bytes of `spec` built once per test process (gcc is slow on a busy
/// machine; the same plugin appears in many fixtures).
inline std::string elf_bytes(const ElfSpec& spec) {
  static TempDir dir;
  static std::map<std::string, std::string> cache;
  std::ostringstream key;
  key << spec.soname_ << '|' << spec.new_dtags_ << '|' << spec.rodata_padding_ << '|' << spec.executable_;
  for (const auto* v : {&spec.exports_, &spec.strings_, &spec.runpath_, &spec.link_, &spec.needs_}) {
    key << '|';
    for (const auto& s : *v) key << s << ',';
  }
  auto it = cache.find(key.str());
  if (it != cache.end()) return it->second;
  std::string out = dir.path() + "/obj" + std::to_string(cache.size());
  build_elf(out, spec);
  return cache[key.str()] = read_bytes(out);
}

/// Bytes in memory, handed out in chunks of at most `chunk` bytes; counts
/// what was read and what was skipped.
class MemoryReader : public ContentReader {
 public:
  explicit MemoryReader(std::string data, size_t chunk = 1 << 16) : data_(std::move(data)), chunk_(chunk) {}
  size_t read(char* buf, size_t n) override {
    size_t k = std::min({n, chunk_, data_.size() - pos_});
    std::copy_n(data_.data() + pos_, k, buf);
    pos_ += k;
    read_ += k;
    return k;
  }
  uint64_t skip(uint64_t n) override {
    uint64_t k = std::min<uint64_t>(n, data_.size() - pos_);
    pos_ += k;
    skipped_ += k;
    return k;
  }
  uint64_t bytes_read() const { return read_; }
  uint64_t bytes_skipped() const { return skipped_; }

 private:
  std::string data_;
  size_t chunk_;
  size_t pos_ = 0;
  uint64_t read_ = 0, skipped_ = 0;
};

}  // namespace trainimg::inspect::testing
