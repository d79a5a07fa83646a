// SPDX-License-Identifier: GPL-3.0-or-later
#include "common/source_file.h"

#include <algorithm>
#include <fstream>
#include <iostream>
#include <iterator>
#include <sstream>

#include "common/error.h"

namespace trainimg {

SourceFile::SourceFile(std::string name, std::string text)
    : name_(std::move(name)), text_(std::move(text)) {}

SourceFile SourceFile::read(const std::string& path) {
  if (path == "-") {
    std::ostringstream ss;
    ss << std::cin.rdbuf();
    return SourceFile("<stdin>", ss.str());
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) throw_errno(path, "cannot open");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) throw_errno(path, "cannot read");
  return SourceFile(path, std::move(text));
}

void SourceFile::index() const {
  if (!starts_.empty()) return;
  // A UTF-8 byte-order mark is not on line 1 (BuildKit and editors drop it):
  // columns count from the byte after it.
  starts_.push_back(text_.rfind("\xEF\xBB\xBF", 0) == 0 ? 3 : 0);
  for (size_t i = 0; i < text_.size(); ++i)
    if (text_[i] == '\n') starts_.push_back(i + 1);
}

SourceFile::LineCol SourceFile::line_col(size_t offset) const {
  index();
  offset = std::clamp(offset, starts_[0], std::max(starts_[0], text_.size()));
  auto it = std::upper_bound(starts_.begin(), starts_.end(), offset);
  size_t line = static_cast<size_t>(it - starts_.begin());  // 1-based
  return {static_cast<int>(line), static_cast<int>(offset - starts_[line - 1] + 1)};
}

int SourceFile::line_count() const {
  index();
  int n = static_cast<int>(starts_.size());
  if (!text_.empty() && text_.back() == '\n') --n;
  return n;
}

size_t SourceFile::line_offset(int line) const {
  index();
  if (line < 1) return 0;
  if (static_cast<size_t>(line) > starts_.size()) return text_.size();
  return starts_[line - 1];
}

std::string_view SourceFile::line_text(int line) const {
  index();
  if (line < 1 || static_cast<size_t>(line) > starts_.size()) return {};
  size_t b = starts_[line - 1];
  size_t e = text_.find('\n', b);
  if (e == std::string::npos) e = text_.size();
  std::string_view v(text_.data() + b, e - b);
  if (!v.empty() && v.back() == '\r') v.remove_suffix(1);
  return v;
}

}  // namespace trainimg
