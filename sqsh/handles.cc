// SPDX-License-Identifier: GPL-3.0-or-later
#include "sqsh/handles.h"

#include "common/error.h"

namespace trainimg::sqsh {

std::string_view error_text(int rc) {
  switch (rc) {
    case SQFS_ERROR_ALLOC: return "out of memory";
    case SQFS_ERROR_IO: return "I/O error";
    case SQFS_ERROR_COMPRESSOR: return "compressed data is corrupt (decompression failed)";
    case SQFS_ERROR_INTERNAL: return "internal libsquashfs error";
    case SQFS_ERROR_CORRUPTED: return "corrupt squashfs structure";
    case SQFS_ERROR_UNSUPPORTED: return "unsupported feature (compressor, option or xattr type)";
    case SQFS_ERROR_OVERFLOW: return "size overflow (corrupt or hostile image)";
    case SQFS_ERROR_OUT_OF_BOUNDS: return "reference points outside the image (truncated or corrupt)";
    case SFQS_ERROR_SUPER_MAGIC: return "not a squashfs file (bad magic)";
    case SFQS_ERROR_SUPER_VERSION: return "unsupported squashfs version (only 4.0)";
    case SQFS_ERROR_SUPER_BLOCK_SIZE: return "invalid block size";
    case SQFS_ERROR_NOT_DIR: return "not a directory";
    case SQFS_ERROR_NO_ENTRY: return "no such entry";
    case SQFS_ERROR_LINK_LOOP: return "hard link loop";
    case SQFS_ERROR_NOT_FILE: return "not a regular file";
    case SQFS_ERROR_ARG_INVALID: return "invalid argument";
    case SQFS_ERROR_SEQUENCE: return "calls out of sequence";
    default: return "unknown libsquashfs error";
  }
}

int check(int rc, std::string_view action, const std::string& path) {
  if (rc < 0) throw Error(path, std::string(action) + ": " + std::string(error_text(rc)));
  return rc;
}

}  // namespace trainimg::sqsh
