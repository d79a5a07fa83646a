// SPDX-License-Identifier: GPL-3.0-or-later
// Replays every regression input of tests/fuzz/regressions/NAME/ through the
// fuzz target fuzz_NAME (compiled here with its entry point renamed), in
// every build: each input once crashed, leaked or hung a reader; it must now
// end cleanly (ASan+UBSan in CI's sanitizer pass). Also checks that every
// regressions/ folder belongs to a target.
#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

#define TRAINIMG_FUZZ_TARGET(name, fn) extern "C" int fn(const uint8_t*, size_t);
#include "fuzz_targets.inc"
#undef TRAINIMG_FUZZ_TARGET

namespace {

namespace fs = std::filesystem;
using Entry = int (*)(const uint8_t*, size_t);

const std::map<std::string, Entry>& targets() {
  static const std::map<std::string, Entry> m = {
#define TRAINIMG_FUZZ_TARGET(name, fn) {#name, fn},
#include "fuzz_targets.inc"
#undef TRAINIMG_FUZZ_TARGET
  };
  return m;
}

const fs::path kRegressions = fs::path(TRAINIMG_SOURCE_DIR) / "tests/fuzz/regressions";

TEST(FuzzRegressions, EveryFolderIsATarget) {
  ASSERT_GE(targets().size(), 10u);
  for (const auto& d : fs::directory_iterator(kRegressions))
    if (d.is_directory()) {
      EXPECT_TRUE(targets().count(d.path().filename().string())) << d.path();
    }
}

TEST(FuzzRegressions, EveryInputEndsCleanly) {
  size_t replayed = 0;
  for (const auto& [name, fn] : targets()) {
    fs::path dir = kRegressions / name;
    if (!fs::is_directory(dir)) continue;
    for (const auto& f : fs::directory_iterator(dir)) {
      if (!f.is_regular_file() || f.path().filename().string().starts_with(".")) continue;
      std::ifstream in(f.path(), std::ios::binary);
      std::stringstream ss;
      ss << in.rdbuf();
      std::string bytes = ss.str();
      SCOPED_TRACE(f.path().string());
      EXPECT_EQ(fn(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()), 0);
      ++replayed;
    }
  }
  RecordProperty("replayed", static_cast<int>(replayed));
}

}  // namespace
