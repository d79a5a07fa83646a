// SPDX-License-Identifier: GPL-3.0-or-later
// A named text buffer with a lazy line table (as LLVM's SourceMgr): offsets to
// 1-based line/column, and line text for caret displays.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace trainimg {

class SourceFile {
 public:
  SourceFile(std::string name, std::string text);
  /// Reads a file ("-" = standard input). Throws Error when unreadable.
  static SourceFile read(const std::string& path);

  const std::string& name() const { return name_; }
  const std::string& text() const { return text_; }

  struct LineCol {
    int line;
    int column;
  };
  /// 1-based line and column (in bytes) of a byte offset; offsets past the end
  /// map to the end. A leading UTF-8 byte-order mark is not part of line 1.
  LineCol line_col(size_t offset) const;
  /// Text of a 1-based line without its newline (and without a trailing \r).
  std::string_view line_text(int line) const;
  int line_count() const;
  /// Byte offset of the start of a 1-based line.
  size_t line_offset(int line) const;

 private:
  void index() const;
  std::string name_;
  std::string text_;
  mutable std::vector<size_t> starts_;
};

}  // namespace trainimg
