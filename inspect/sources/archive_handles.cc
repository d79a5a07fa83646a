// SPDX-License-Identifier: GPL-3.0-or-later
#include "inspect/sources/archive_handles.h"

#include <new>

#include "common/error.h"

namespace trainimg::inspect {

ArchiveReader new_archive_reader() {
  ArchiveReader a(archive_read_new());
  if (!a) throw std::bad_alloc();
  return a;
}

ArchiveWriter new_archive_writer() {
  ArchiveWriter a(archive_write_new());
  if (!a) throw std::bad_alloc();
  return a;
}

void check_archive(archive* a, int rc, const std::string& file, const std::string& what) {
  if (rc >= ARCHIVE_WARN) return;
  const char* msg = archive_error_string(a);
  throw Error(file, what + ": " + (msg ? msg : "libarchive error " + std::to_string(rc)));
}

}  // namespace trainimg::inspect
