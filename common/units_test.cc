// SPDX-License-Identifier: GPL-3.0-or-later
#include "common/units.h"

#include <gtest/gtest.h>

namespace trainimg {
namespace {

TEST(ParseByteSize, TakesWhatTheFlagsAndTheSeedsWrite) {
  EXPECT_EQ(parse_byte_size("1024"), 1024u);
  EXPECT_EQ(parse_byte_size("128K"), 131072u);
  EXPECT_EQ(parse_byte_size("1M"), 1048576u);
  EXPECT_EQ(parse_byte_size("512m"), uint64_t(512) << 20);
  EXPECT_EQ(parse_byte_size("50G"), uint64_t(50) << 30);
  EXPECT_EQ(parse_byte_size("2T"), uint64_t(2) << 40);
  EXPECT_EQ(parse_byte_size("1MiB"), 1048576u);
  EXPECT_EQ(parse_byte_size(" 8B "), 8u);
  EXPECT_EQ(parse_byte_size("8589934591G"), 9223372035781033984u);
}

TEST(ParseByteSize, RefusesFractionsSignsOtherUnitsAndOverflow) {
  for (const char* bad : {"", "G", "1.5M", "-1", "+1", "5X", "1MB2", "1 M B", "1KiBs"})
    EXPECT_EQ(parse_byte_size(bad), std::nullopt) << bad;
  // Found by fuzz_host (UBSan: signed overflow in the multiplication).
  EXPECT_EQ(parse_byte_size("9999999999999999m"), std::nullopt);
  EXPECT_EQ(parse_byte_size("99999999999999999999"), std::nullopt);
  EXPECT_EQ(parse_byte_size("8589934592G"), std::nullopt);
}

TEST(FormatByteSize, OneDecimalInTheLargestUnitReached) {
  EXPECT_EQ(format_byte_size(0), "0 bytes");
  EXPECT_EQ(format_byte_size(1023), "1023 bytes");
  EXPECT_EQ(format_byte_size(2048), "2.0 KiB");
  EXPECT_EQ(format_byte_size(3u << 20), "3.0 MiB");
  EXPECT_EQ(format_byte_size((1ull << 20) - 1), "1.0 MiB");
  EXPECT_EQ(format_byte_size(10066329600ull), "9.4 GiB");
  EXPECT_EQ(format_byte_size(UINT64_MAX), "16.0 EiB");
}

TEST(FormatExactByteSize, LargestUnitThatDivides) {
  EXPECT_EQ(format_exact_byte_size(10737418240ull), "10 GiB");
  EXPECT_EQ(format_exact_byte_size(1536 * 1024), "1536 KiB");
  EXPECT_EQ(format_exact_byte_size(1u << 20), "1 MiB");
  EXPECT_EQ(format_exact_byte_size(7), "7 B");
  EXPECT_EQ(format_exact_byte_size(0), "0 B");
}

}  // namespace
}  // namespace trainimg
