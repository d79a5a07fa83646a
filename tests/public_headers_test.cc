// SPDX-License-Identifier: GPL-3.0-or-later
// Each folder is a library with a small public header (style.md §6). Outside
// inspect/, code includes only inspect/inspect.h (images) and inspect/host.h
// (hosts), plus the test helpers of inspect/testing/. Unit tests (*_test.cc)
// and the fuzz harnesses (tests/fuzz/), which drive internal parsers on
// purpose, are exempt.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

namespace {

namespace fs = std::filesystem;

// The quoted header of an `#include "…"` line, or "" for any other line.
std::string included(std::string_view line) {
  size_t i = line.find_first_not_of(" \t");
  if (i == std::string_view::npos || line[i] != '#') return {};
  i = line.find_first_not_of(" \t", i + 1);
  if (i == std::string_view::npos || line.substr(i, 7) != "include") return {};
  size_t open = line.find('"', i + 7);
  if (open == std::string_view::npos) return {};
  size_t close = line.find('"', open + 1);
  if (close == std::string_view::npos) return {};
  return std::string(line.substr(open + 1, close - open - 1));
}

bool allowed(const std::string& header) {
  return !header.starts_with("inspect/") || header == "inspect/inspect.h" || header == "inspect/host.h" ||
         header.starts_with("inspect/testing/");
}

// "LINE: HEADER" for every inspect header `text` includes that is not public.
std::vector<std::string> private_includes(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  std::string line;
  for (int n = 1; std::getline(in, line); ++n)
    if (std::string h = included(line); !h.empty() && !allowed(h))
      out.push_back(std::to_string(n) + ": " + h);
  return out;
}

bool exempt(const std::string& rel) {
  return rel.starts_with("inspect/") || rel.starts_with("tests/fuzz/") || rel.ends_with("_test.cc");
}

struct Scan {
  std::vector<std::string> violations;  // "FILE:LINE: HEADER"
  int files = 0;                        // .cc/.h files checked
  int public_includes = 0;              // of inspect/inspect.h or inspect/host.h
};

Scan scan(const fs::path& root) {
  Scan s;
  for (auto it = fs::recursive_directory_iterator(root); it != fs::recursive_directory_iterator(); ++it) {
    const fs::path& p = it->path();
    std::string name = p.filename().string();
    if (it->is_directory()) {  // hidden folders and build trees hold no sources of ours
      if (name.starts_with(".") || fs::exists(p / "CMakeCache.txt")) it.disable_recursion_pending();
      continue;
    }
    if (!it->is_regular_file() || (p.extension() != ".cc" && p.extension() != ".h")) continue;
    std::string rel = fs::relative(p, root).generic_string();
    if (exempt(rel)) continue;
    std::ifstream f(p);
    std::stringstream text;
    text << f.rdbuf();
    ++s.files;
    for (const std::string& v : private_includes(text.str())) s.violations.push_back(rel + ":" + v);
    std::string t = text.str();
    for (std::string_view pub : {"#include \"inspect/inspect.h\"", "#include \"inspect/host.h\""})
      for (size_t at = t.find(pub); at != std::string::npos; at = t.find(pub, at + 1)) ++s.public_includes;
  }
  return s;
}

TEST(PublicHeaders, OtherFoldersIncludeOnlyInspectsPublicHeaders) {
  Scan s = scan(TRAINIMG_SOURCE_DIR);
  std::string list;
  for (const std::string& v : s.violations) list += "  " + v + "\n";
  EXPECT_TRUE(s.violations.empty()) << "include inspect/inspect.h or inspect/host.h instead of:\n" << list;
  // The scan reached the callers: builder/ and cmd/ use both public headers.
  EXPECT_GT(s.files, 50);
  EXPECT_GE(s.public_includes, 10);
}

TEST(PublicHeaders, InternalHeaderIsReportedWithItsLine) {
  EXPECT_EQ(private_includes("// x\n#include \"inspect/inspect.h\"\n#include \"inspect/host/rules.h\"\n"),
            std::vector<std::string>{"3: inspect/host/rules.h"});
  EXPECT_EQ(private_includes("#  include \"inspect/sources/digest.h\"  // sha\n"),
            std::vector<std::string>{"1: inspect/sources/digest.h"});
}

TEST(PublicHeaders, PublicAndTestingHeadersAndOtherFoldersPass) {
  EXPECT_TRUE(private_includes("#include \"inspect/inspect.h\"\n"
                               "#include \"inspect/host.h\"\n"
                               "#include \"inspect/testing/image_builder.h\"\n"
                               "#include \"sqsh/sqsh.h\"\n"
                               "#include <inspect/whatever.h>\n"
                               "// #include \"inspect/tree.h\" is only a comment\n")
                  .empty());
}

TEST(PublicHeaders, UnitTestsFuzzHarnessesAndInspectItselfAreExempt) {
  EXPECT_TRUE(exempt("inspect/sources/tar_layer.cc"));
  EXPECT_TRUE(exempt("builder/import/merge_test.cc"));
  EXPECT_TRUE(exempt("tests/fuzz/fuzz_host.cc"));
  EXPECT_FALSE(exempt("builder/import/merge.h"));
  EXPECT_FALSE(exempt("cmd/host.cc"));
  EXPECT_FALSE(exempt("tests/cli_test_util.h"));
}

}  // namespace
