// SPDX-License-Identifier: GPL-3.0-or-later
// Each folder is a library with a small public header (style.md §6). Outside
// inspect/, code includes only the public headers of the image library
// (inspect/inspect.h and one per area) and of the host library
// (inspect/host.h and, in inspect/host/, probes.h, fleet.h and checkers.h):
// kInspect, plus the test helpers of inspect/testing/. Unit tests
// (*_test.cc) and the fuzz harnesses (tests/fuzz/), which drive internal
// parsers on purpose, are exempt. Every other library folder (builder/ and the
// four inside it, recipes/ and recipes/dockerfile/, common/policy/, sqsh/,
// cmd/cli/) is held to its one public header the same way (kPublic).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
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

// The public headers of inspect/: expectations and the report, one header per
// area of the image library (sources, the layer-tar reader, registry and
// blob cache, Docker Engine client), and the host library's (its rules.h,
// rules/rules.def and parsers.h are internal).
const std::set<std::string> kInspect = {
    "inspect/inspect.h",           "inspect/sources/source.h", "inspect/sources/tar.h",
    "inspect/registry/registry.h", "inspect/engine/engine.h",  "inspect/host.h",
    "inspect/host/probes.h",       "inspect/host/fleet.h",     "inspect/host/checkers.h",
};

bool allowed(const std::string& header) {
  return !header.starts_with("inspect/") || kInspect.contains(header) ||
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

// Every library folder but inspect/ (above) and common/ (the base: every
// header is public), with the one header code outside it may include. A
// folder with its own CMakeLists.txt inside another library's folder is a
// library of its own (builder/import/ in builder/): a file belongs to the
// innermost library folder that holds it, and reaches its parent's or its
// neighbours' code through their public headers too.
const std::map<std::string, std::string> kPublic = {
    {"builder/", "builder/builder.h"},
    {"builder/import/", "builder/import/import.h"},
    {"builder/publish/", "builder/publish/publish.h"},
    {"builder/pyxis/", "builder/pyxis/pyxis.h"},
    {"builder/slurm/", "builder/slurm/slurm.h"},
    {"common/policy/", "common/policy/policy.h"},
    {"recipes/", "recipes/recipes.h"},
    {"recipes/dockerfile/", "recipes/dockerfile/dockerfile.h"},
    {"sqsh/", "sqsh/sqsh.h"},
    {"cmd/cli/", "cmd/cli/cli.h"},
};

// The kPublic folder holding `path` (the innermost), or "".
std::string library_of(const std::string& path) {
  std::string best;
  for (const auto& [folder, header] : kPublic)
    if (path.starts_with(folder) && folder.size() > best.size()) best = folder;
  return best;
}

// "LINE: HEADER" for every header of another library folder that `text`
// (the file `rel`) includes and that is not its public header.
std::vector<std::string> private_library_includes(const std::string& rel, const std::string& text) {
  std::vector<std::string> out;
  if (rel.ends_with("_test.cc") || rel.starts_with("tests/fuzz/")) return out;
  const std::string own = library_of(rel);
  std::istringstream in(text);
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
    std::string h = included(line);
    if (h.empty()) continue;
    std::string lib = library_of(h);
    if (!lib.empty() && lib != own && h != kPublic.at(lib)) out.push_back(std::to_string(n) + ": " + h);
  }
  return out;
}

bool exempt(const std::string& rel) {
  return rel.starts_with("inspect/") || rel.starts_with("tests/fuzz/") || rel.ends_with("_test.cc");
}

struct Scan {
  std::vector<std::string> violations;          // "FILE:LINE: HEADER"
  std::vector<std::string> library_violations;  // the same, for the kPublic folders
  int files = 0;                                // .cc/.h files checked
  int public_includes = 0;                      // of kInspect headers
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
    std::ifstream f(p);
    std::stringstream text;
    text << f.rdbuf();
    for (const std::string& v : private_library_includes(rel, text.str()))
      s.library_violations.push_back(rel + ":" + v);
    if (exempt(rel)) continue;
    ++s.files;
    for (const std::string& v : private_includes(text.str())) s.violations.push_back(rel + ":" + v);
    std::string t = text.str();
    for (const std::string& h : kInspect) {
      std::string pub = "#include \"" + h + "\"";
      for (size_t at = t.find(pub); at != std::string::npos; at = t.find(pub, at + 1)) ++s.public_includes;
    }
  }
  return s;
}

TEST(PublicHeaders, OtherFoldersIncludeOnlyInspectsPublicHeaders) {
  Scan s = scan(TRAINIMG_SOURCE_DIR);
  std::string list;
  for (const std::string& v : s.violations) list += "  " + v + "\n";
  EXPECT_TRUE(s.violations.empty()) << "include a public header of inspect/ (kInspect) instead of:\n" << list;
  // The scan reached the callers: builder/ and cmd/ use the public headers.
  EXPECT_GT(s.files, 50);
  EXPECT_GE(s.public_includes, 10);
}

TEST(PublicHeaders, OtherFoldersIncludeOnlyEachLibrarysPublicHeaders) {
  Scan s = scan(TRAINIMG_SOURCE_DIR);
  std::string list;
  for (const std::string& v : s.library_violations) list += "  " + v + "\n";
  EXPECT_TRUE(s.library_violations.empty()) << "include the library's public header instead of:\n" << list;
}

TEST(PublicHeaders, InternalLibraryHeaderIsReportedWithItsLine) {
  EXPECT_EQ(private_library_includes("cmd/import.cc", "// x\n#include \"builder/import/import_impl.h\"\n"),
            std::vector<std::string>{"2: builder/import/import_impl.h"});
  EXPECT_EQ(private_library_includes("inspect/x.cc", "#include \"sqsh/image.h\"\n"),
            std::vector<std::string>{"1: sqsh/image.h"});
  // Inside its own folder, and in unit tests and fuzz harnesses, any header goes.
  EXPECT_TRUE(
      private_library_includes("builder/import/merge.cc", "#include \"builder/import/merge.h\"\n").empty());
  EXPECT_TRUE(private_library_includes("tests/fuzz/fuzz_sqsh.cc", "#include \"sqsh/image.h\"\n").empty());
  EXPECT_TRUE(private_library_includes("cmd/lint.cc", "#include \"recipes/recipes.h\"\n").empty());
  // A library inside another's folder: each side sees only the other's public header.
  EXPECT_EQ(private_library_includes("builder/build.cc",
                                     "#include \"builder/import/import.h\"\n"
                                     "#include \"builder/import/merge.h\"\n"),
            std::vector<std::string>{"2: builder/import/merge.h"});
  EXPECT_EQ(private_library_includes("builder/import/import.cc",
                                     "#include \"builder/builder.h\"\n"
                                     "#include \"builder/context.h\"\n"
                                     "#include \"builder/publish/publish.h\"\n"),
            std::vector<std::string>{"2: builder/context.h"});
  EXPECT_EQ(private_library_includes("recipes/lint.cc", "#include \"recipes/dockerfile/expand.h\"\n"),
            std::vector<std::string>{"1: recipes/dockerfile/expand.h"});
}

// The folders whose CMakeLists.txt declares a library (trainimg_library or
// add_library), relative, with a trailing '/'; build trees and tests/ left out.
std::set<std::string> library_folders(const fs::path& root) {
  std::set<std::string> out;
  for (auto it = fs::recursive_directory_iterator(root); it != fs::recursive_directory_iterator(); ++it) {
    const fs::path& p = it->path();
    if (it->is_directory()) {
      std::string name = p.filename().string();
      if (name.starts_with(".") || name == "tests" || fs::exists(p / "CMakeCache.txt"))
        it.disable_recursion_pending();
      continue;
    }
    if (p.filename() != "CMakeLists.txt" || p.parent_path() == root) continue;
    std::ifstream f(p);
    std::stringstream text;
    text << f.rdbuf();
    if (text.str().find("trainimg_library(") != std::string::npos ||
        text.str().find("add_library(") != std::string::npos)
      out.insert(fs::relative(p.parent_path(), root).generic_string() + "/");
  }
  return out;
}

TEST(PublicHeaders, EveryLibraryFolderHasOnePublicHeaderListedHere) {
  std::set<std::string> folders = library_folders(TRAINIMG_SOURCE_DIR);
  // common/ (every header public) and the two libraries of inspect/ (kInspect).
  for (const char* f : {"common/", "inspect/", "inspect/host/"}) EXPECT_EQ(folders.erase(f), 1u) << f;
  std::set<std::string> listed;
  for (const auto& [folder, header] : kPublic) {
    listed.insert(folder);
    EXPECT_TRUE(fs::exists(fs::path(TRAINIMG_SOURCE_DIR) / header)) << header;
  }
  EXPECT_EQ(folders, listed);
}

TEST(PublicHeaders, InternalHeaderIsReportedWithItsLine) {
  EXPECT_EQ(private_includes("// x\n#include \"inspect/inspect.h\"\n#include \"inspect/host/rules.h\"\n"),
            std::vector<std::string>{"3: inspect/host/rules.h"});
  EXPECT_EQ(private_includes("#  include \"inspect/sources/image_config.h\"  // config\n"),
            std::vector<std::string>{"1: inspect/sources/image_config.h"});
  // The host library's internal headers next to its public ones.
  EXPECT_EQ(private_includes("#include \"inspect/host/fleet.h\"\n#include \"inspect/host/parsers.h\"\n"
                             "#include \"inspect/host/rules/rules.def\"\n"),
            (std::vector<std::string>{"2: inspect/host/parsers.h", "3: inspect/host/rules/rules.def"}));
  // A public header's folder is not public: its neighbours stay internal.
  EXPECT_EQ(private_includes("#include \"inspect/sources/source.h\"\n"
                             "#include \"inspect/sources/tar_layer.h\"\n"
                             "#include \"inspect/registry/registry.h\"\n"
                             "#include \"inspect/registry/client.h\"\n"
                             "#include \"inspect/engine/engine.h\"\n"
                             "#include \"inspect/engine/transfer.h\"\n"),
            (std::vector<std::string>{"2: inspect/sources/tar_layer.h", "4: inspect/registry/client.h",
                                      "6: inspect/engine/transfer.h"}));
}

TEST(PublicHeaders, PublicAndTestingHeadersAndOtherFoldersPass) {
  EXPECT_TRUE(private_includes("#include \"inspect/inspect.h\"\n"
                               "#include \"inspect/sources/source.h\"\n"
                               "#include \"inspect/sources/tar.h\"\n"
                               "#include \"inspect/registry/registry.h\"\n"
                               "#include \"inspect/engine/engine.h\"\n"
                               "#include \"inspect/host.h\"\n"
                               "#include \"inspect/host/probes.h\"\n"
                               "#include \"inspect/host/fleet.h\"\n"
                               "#include \"inspect/host/checkers.h\"\n"
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
