// SPDX-License-Identifier: GPL-3.0-or-later
// Sizes as users write them on a command line and the seeds print them.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace trainimg {

/// "131072", "128K", "1M", "50G", "2T" -> bytes (powers of 1024; the unit in
/// either case, also as "KiB"/"MiB"/…, and "B" alone). Blanks around it are
/// ignored. nullopt for anything else: a fraction, a sign, another unit, or a
/// value past 2^63 - 1.
std::optional<uint64_t> parse_byte_size(std::string_view s);

}  // namespace trainimg
