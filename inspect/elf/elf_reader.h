// SPDX-License-Identifier: GPL-3.0-or-later
// A small, bounded ELF64 reader over a streaming ContentReader: the dynamic
// section (soname, DT_NEEDED, run paths), exported dynamic symbols, and
// version strings in read-only data. It never seeks backwards and never holds
// the whole file: it keeps the first read-only segment (where the linker puts
// .dynsym/.dynstr/.gnu.hash), the dynamic section, and a sliding window for
// the string scan. Hostile files give an `error`, never a crash.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "inspect/sources/source.h"

namespace trainimg::inspect::elf {

struct ElfOptions {
  /// Strings to look for in the file's read-only bytes; for each one found,
  /// the version-like text right after it is reported (first occurrence).
  std::vector<std::string> markers;
  /// Which exported dynamic symbols to keep (all when empty).
  std::function<bool(std::string_view)> keep_symbol;
  /// Upper bound on the kept first segment; tables beyond it are reported
  /// missing rather than buffered.
  uint64_t max_prefix = 32ull << 20;
};

struct ElfInfo {
  bool is_elf = false;  ///< ELF64 little-endian (x86-64, aarch64)
  uint16_t type = 0;    ///< ET_EXEC = 2, ET_DYN = 3
  std::string soname;
  std::vector<std::string> needed;
  std::vector<std::string> runpath;  ///< DT_RUNPATH split on ':'
  std::vector<std::string> rpath;    ///< DT_RPATH split on ':'
  std::vector<std::string> exports;  ///< kept exported symbols, sorted, unique
  std::map<std::string, std::string> markers;  ///< marker -> text after it
  /// Empty when the file was read completely; otherwise why and where the
  /// reader stopped ("dynamic section at 0x… past the end of the file").
  std::string error;
};

/// Reads one file. Not an ELF file (or ELF32/big-endian): is_elf false, no
/// error. Consumes at most the bytes up to the end of the last read-only
/// segment or the dynamic section, whichever is later. Never throws for bad
/// ELF data; ContentReader errors (corrupt image) propagate.
ElfInfo read_elf(ContentReader& r, const ElfOptions& opt = {});

}  // namespace trainimg::inspect::elf
