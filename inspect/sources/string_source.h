// SPDX-License-Identifier: GPL-3.0-or-later
// Bytes already in memory, read in order as a ContentReader: a small
// docker-archive member replayed as a layer tar, or a file's bytes handed to
// a LayerVisitor. Borrows the string: it must outlive it.
#pragma once

#include <algorithm>
#include <string>
#include <string_view>

#include "inspect/sources/source.h"

namespace trainimg::inspect {

class StringSource final : public ContentReader {
 public:
  explicit StringSource(const std::string& s) : s_(s) {}
  explicit StringSource(std::string&&) = delete;  // would outlive its bytes
  size_t read(char* buf, size_t n) override {
    size_t k = std::min(n, s_.size() - pos_);
    std::copy_n(s_.data() + pos_, k, buf);
    pos_ += k;
    return k;
  }
  uint64_t skip(uint64_t n) override {
    size_t k = static_cast<size_t>(std::min<uint64_t>(n, s_.size() - pos_));
    pos_ += k;
    return k;
  }

 private:
  std::string_view s_;
  size_t pos_ = 0;
};

}  // namespace trainimg::inspect
