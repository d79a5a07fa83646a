// SPDX-License-Identifier: GPL-3.0-or-later
// ImageSource over an unpacked root file system (`dir:ROOTFS`): one layer,
// id "dir". Walked with lstat/openat relative to the root's descriptor and
// O_NOFOLLOW, so a symlink in the tree is reported as a symlink and never
// followed, whether it points inside the tree or out of it.
#pragma once

#include <memory>
#include <string>

#include "inspect/sources/source.h"

namespace trainimg::inspect {

/// Opens `root` (no "dir:" prefix). Throws trainimg::Error naming `root` when
/// it is missing or not a directory. walk() yields one layer "dir", each
/// directory's entries sorted by name; the later paths of a hard-linked
/// regular file come as EntryType::Hardlink to the first one.
std::unique_ptr<ImageSource> open_dir_source(const std::string& root);

}  // namespace trainimg::inspect
