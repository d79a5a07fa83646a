// SPDX-License-Identifier: GPL-3.0-or-later
#include "common/error.h"
#include "sqsh/sqsh.h"

namespace trainimg::sqsh {

std::string normalize_image_path(std::string_view p, const std::string& context) {
  if (p.find('\0') != std::string_view::npos) throw Error(context, "path contains a NUL byte");
  std::string out;
  size_t pos = 0;
  while (pos <= p.size()) {
    size_t slash = p.find('/', pos);
    if (slash == std::string_view::npos) slash = p.size();
    std::string_view comp = p.substr(pos, slash - pos);
    pos = slash + 1;
    if (comp.empty() || comp == ".") continue;
    if (comp == "..") throw Error(context, "path \"" + std::string(p) + "\" has a \"..\" component");
    out += '/';
    out += comp;
  }
  return out.empty() ? "/" : out;
}

std::string_view to_string(Compressor c) {
  switch (c) {
    case Compressor::None: return "none";
    case Compressor::Gzip: return "gzip";
    case Compressor::Lzma: return "lzma";
    case Compressor::Lzo: return "lzo";
    case Compressor::Xz: return "xz";
    case Compressor::Lz4: return "lz4";
    case Compressor::Zstd: return "zstd";
  }
  return "unknown";
}

std::optional<Compressor> parse_compressor(std::string_view name) {
  for (auto c : {Compressor::None, Compressor::Gzip, Compressor::Lzma, Compressor::Lzo, Compressor::Xz,
                 Compressor::Lz4, Compressor::Zstd})
    if (to_string(c) == name) return c;
  return std::nullopt;
}

std::string_view to_string(NodeType t) {
  switch (t) {
    case NodeType::File: return "file";
    case NodeType::Dir: return "dir";
    case NodeType::Symlink: return "symlink";
    case NodeType::Hardlink: return "hardlink";
    case NodeType::Fifo: return "fifo";
    case NodeType::CharDev: return "chardev";
    case NodeType::BlockDev: return "blockdev";
    case NodeType::Socket: return "socket";
  }
  return "unknown";
}

}  // namespace trainimg::sqsh
