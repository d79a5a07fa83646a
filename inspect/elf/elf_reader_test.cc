// SPDX-License-Identifier: GPL-3.0-or-later
#include "inspect/elf/elf_reader.h"

#include <gtest/gtest.h>

#include <cstring>

#include "inspect/elf/elf_fixture_test_util.h"

namespace trainimg::inspect::elf {
namespace {

using testing::build_elf;
using testing::ElfSpec;
using testing::MemoryReader;
using testing::read_bytes;
using testing::TempDir;

const std::vector<std::string> kMarkers = {"NET/OFI Initializing aws-ofi-nccl ", "NCCL version "};

ElfOptions plugin_options() {
  ElfOptions o;
  o.markers = kMarkers;
  o.keep_symbol = [](std::string_view s) { return s.rfind("nccl", 0) == 0; };
  return o;
}

// A plugin shaped like aws-ofi-nccl's libnccl-net-ofi.so: soname, the
// ncclNetPlugin_vN exports, the init string, DT_NEEDED libfabric.so.1 and a
// RUNPATH to the EFA prefix.
TEST(ElfReader, ReadsSonameNeededRunpathExportsAndVersionString) {
  TempDir t;
  std::string fabric = t.path() + "/efa/lib/libfabric.so.1";
  build_elf(fabric, ElfSpec().so("libfabric.so.1").exports({"fi_getinfo"}));
  std::string so = t.path() + "/ofi/lib/libnccl-net-ofi.so";
  build_elf(so, ElfSpec()
                    .so("libnccl-net-ofi.so")
                    .exports({"ncclNetPlugin_v8", "ncclNetPlugin_v9", "ncclTunerPlugin_v3", "other_symbol"})
                    .strings({"NET/OFI Initializing aws-ofi-nccl 1.21.1"})
                    .runpath({"/opt/amazon/efa/lib", "$ORIGIN"})
                    .link({fabric}));
  MemoryReader r(read_bytes(so));
  ElfInfo e = read_elf(r, plugin_options());
  EXPECT_TRUE(e.is_elf);
  EXPECT_EQ(e.error, "");
  EXPECT_EQ(e.type, 3);
  EXPECT_EQ(e.soname, "libnccl-net-ofi.so");
  EXPECT_NE(std::find(e.needed.begin(), e.needed.end(), "libfabric.so.1"), e.needed.end());
  EXPECT_EQ(e.runpath, (std::vector<std::string>{"/opt/amazon/efa/lib", "$ORIGIN"}));
  EXPECT_TRUE(e.rpath.empty());
  EXPECT_EQ(e.exports, (std::vector<std::string>{"ncclNetPlugin_v8", "ncclNetPlugin_v9", "ncclTunerPlugin_v3"}));
  EXPECT_EQ(e.markers.at("NET/OFI Initializing aws-ofi-nccl "), "1.21.1");
  EXPECT_EQ(e.markers.count("NCCL version "), 0u);
}

TEST(ElfReader, DisabledNewDtagsGiveRpathNotRunpath) {
  TempDir t;
  std::string so = t.path() + "/libx.so";
  build_elf(so, ElfSpec().so("libx.so").rpath({"/usr/local/mpi/lib"}));
  MemoryReader r(read_bytes(so));
  ElfInfo e = read_elf(r);
  EXPECT_EQ(e.rpath, (std::vector<std::string>{"/usr/local/mpi/lib"}));
  EXPECT_TRUE(e.runpath.empty());
}

TEST(ElfReader, ExecutableNeedingLibmpi) {
  TempDir t;
  std::string mpi = t.path() + "/mpi/lib/libmpi.so.40.30.7";
  build_elf(mpi, ElfSpec().so("libmpi.so.40").exports({"MPI_Init"}));
  std::string exe = t.path() + "/bin/app";
  build_elf(exe, ElfSpec().runpath({"/opt/amazon/openmpi/lib"}).link({mpi}).executable());
  MemoryReader r(read_bytes(exe));
  ElfInfo e = read_elf(r);
  EXPECT_TRUE(e.is_elf);
  EXPECT_EQ(e.soname, "");
  EXPECT_NE(std::find(e.needed.begin(), e.needed.end(), "libmpi.so.40"), e.needed.end());
  EXPECT_EQ(e.runpath, (std::vector<std::string>{"/opt/amazon/openmpi/lib"}));
}

// The NCCL library's own string ("NCCL version 2.30.7+cuda13.4") must be
// found even when a printf format ("NCCL version %s") comes first and the
// reader hands out tiny chunks, so the marker straddles chunk boundaries.
TEST(ElfReader, VersionStringFoundAcrossTinyChunksAfterAFormatString) {
  TempDir t;
  std::string so = t.path() + "/libnccl.so.2.30.7";
  build_elf(so, ElfSpec()
                    .so("libnccl.so.2")
                    .exports({"ncclGetVersion"})
                    .strings({"compiled with NCCL version %s", "NCCL version 2.30.7+cuda13.4"}));
  for (size_t chunk : {1, 3, 7, 4096}) {
    MemoryReader r(read_bytes(so), chunk);
    ElfInfo e = read_elf(r, plugin_options());
    EXPECT_EQ(e.markers.at("NCCL version "), "2.30.7+cuda13.4") << chunk;
    EXPECT_EQ(e.soname, "libnccl.so.2");
  }
}

// Without markers the reader keeps only the first segment and skips the
// large .rodata on the way to the dynamic section.
TEST(ElfReader, SkipsDataItDoesNotNeed) {
  TempDir t;
  std::string so = t.path() + "/libbig.so";
  build_elf(so, ElfSpec().so("libbig.so").padding(4 << 20));
  std::string bytes = read_bytes(so);
  MemoryReader r(bytes);
  ElfInfo e = read_elf(r);
  EXPECT_EQ(e.soname, "libbig.so");
  EXPECT_LT(r.bytes_read(), 256u * 1024);
  EXPECT_GT(r.bytes_skipped(), 4u << 20);
}

TEST(ElfReader, NonElfIsNotAnError) {
  MemoryReader r("#!/bin/sh\necho hello\n");
  ElfInfo e = read_elf(r);
  EXPECT_FALSE(e.is_elf);
  EXPECT_EQ(e.error, "");
  MemoryReader empty("");
  EXPECT_FALSE(read_elf(empty).is_elf);
}

TEST(ElfReader, Elf32IsReportedNotParsed) {
  std::string h(64, '\0');
  h.replace(0, 4, "\x7f" "ELF");
  h[4] = 1;  // ELFCLASS32
  h[5] = 1;
  MemoryReader r(h);
  ElfInfo e = read_elf(r);
  EXPECT_FALSE(e.is_elf);
  EXPECT_EQ(e.error, "not a little-endian ELF64 file");
}

// Found by fuzz_elf (tests/fuzz/regressions/elf/): a program header offset
// near 2^64 wrapped the end-of-table sum around and read before the buffer.
TEST(ElfReader, ProgramHeaderOffsetNearTwoToTheSixtyFourIsOutOfBounds) {
  std::string h(64, '\0');
  std::memcpy(h.data(), "\x7f" "ELF\x02\x01\x01", 7);
  h[16] = 3;
  uint64_t phoff = 0xffffffffffffff40ull;
  std::memcpy(h.data() + 32, &phoff, 8);
  h[54] = 56;
  h[56] = 4;
  MemoryReader r(h);
  ElfInfo e = read_elf(r);
  EXPECT_TRUE(e.is_elf);
  EXPECT_EQ(e.error, "program headers at 0xffffffffffffff40 out of bounds");
}

// Hostile: every truncation and a sweep of byte corruptions of a real
// object must return (with or without an error), never crash or hang.
TEST(ElfReader, TruncatedAndCorruptedObjectsNeverCrash) {
  TempDir t;
  std::string so = t.path() + "/libnccl-net-ofi.so";
  build_elf(so, ElfSpec()
                    .so("libnccl-net-ofi.so")
                    .exports({"ncclNetPlugin_v8"})
                    .strings({"NET/OFI Initializing aws-ofi-nccl 1.21.1"})
                    .runpath({"/opt/amazon/efa/lib"}));
  const std::string good = read_bytes(so);
  int errors = 0;
  for (size_t n = 0; n < good.size(); n += 97) {
    MemoryReader r(good.substr(0, n));
    ElfInfo e = read_elf(r, plugin_options());
    if (!e.error.empty()) ++errors;
  }
  EXPECT_GT(errors, 0);
  uint32_t seed = 12345;
  for (int i = 0; i < 3000; ++i) {
    std::string bad = good;
    for (int k = 0; k < 4; ++k) {
      seed = seed * 1103515245 + 12345;
      // Corrupt the headers and early tables most: that is where offsets live.
      size_t at = (seed >> 8) % std::min<size_t>(bad.size(), i % 2 ? 4096 : bad.size());
      bad[at] = static_cast<char>(seed >> 24);
    }
    MemoryReader r(bad, 1 + i % 5000);
    (void)read_elf(r, plugin_options());
  }
  // A dynamic section claiming 2^63 bytes at the last offset.
  std::string bad = good;
  uint64_t phoff;
  std::memcpy(&phoff, bad.data() + 32, 8);
  uint16_t phnum;
  std::memcpy(&phnum, bad.data() + 56, 2);
  for (uint16_t i = 0; i < phnum; ++i) {
    uint32_t type;
    std::memcpy(&type, bad.data() + phoff + i * 56, 4);
    if (type != 2) continue;
    uint64_t huge = uint64_t{1} << 63;
    std::memcpy(bad.data() + phoff + i * 56 + 8, &huge, 8);
  }
  MemoryReader r(bad);
  ElfInfo e = read_elf(r);
  EXPECT_NE(e.error, "");
}

}  // namespace
}  // namespace trainimg::inspect::elf
