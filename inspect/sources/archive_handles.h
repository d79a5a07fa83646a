// SPDX-License-Identifier: GPL-3.0-or-later
// RAII for libarchive (one deleter per release function) and the one place
// where a libarchive status becomes a trainimg::Error.
#pragma once

#include <archive.h>
#include <archive_entry.h>

#include <memory>
#include <string>

namespace trainimg::inspect {

struct ArchiveReadFree {
  void operator()(archive* a) const { archive_read_free(a); }
};
struct ArchiveWriteFree {
  void operator()(archive* a) const { archive_write_free(a); }
};
struct ArchiveEntryFree {
  void operator()(archive_entry* e) const { archive_entry_free(e); }
};
using ArchiveReader = std::unique_ptr<archive, ArchiveReadFree>;
using ArchiveWriter = std::unique_ptr<archive, ArchiveWriteFree>;
using ArchiveEntryPtr = std::unique_ptr<archive_entry, ArchiveEntryFree>;

/// archive_read_new(); throws std::bad_alloc when libarchive cannot allocate.
ArchiveReader new_archive_reader();
ArchiveWriter new_archive_writer();

/// Throws Error(file, "<what>: <libarchive's message>") when rc is worse than
/// ARCHIVE_WARN (warnings such as an unknown pax keyword are not failures).
void check_archive(archive* a, int rc, const std::string& file, const std::string& what);

}  // namespace trainimg::inspect
