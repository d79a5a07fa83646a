// SPDX-License-Identifier: GPL-3.0-or-later
// Sizes as users write them on a command line and the seeds print them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace trainimg {

/// "131072", "128K", "1M", "50G", "2T" -> bytes (powers of 1024; the unit in
/// either case, also as "KiB"/"MiB"/…, and "B" alone). Blanks around it are
/// ignored. nullopt for anything else: a fraction, a sign, another unit, or a
/// value past 2^63 - 1.
std::optional<uint64_t> parse_byte_size(std::string_view s);

/// A size for people to read, one decimal in the largest power-of-1024 unit
/// it reaches: "812 bytes", "2.0 KiB", "3.5 MiB", "9.4 GiB" (progress lines,
/// summaries, cache listings).
std::string format_byte_size(uint64_t bytes);

/// A size exactly, in the largest power-of-1024 unit that divides it, as the
/// seeds print them: "10 GiB", "1 MiB", "1536 KiB", "7 B".
std::string format_exact_byte_size(uint64_t bytes);

}  // namespace trainimg
