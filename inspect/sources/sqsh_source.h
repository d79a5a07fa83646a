// SPDX-License-Identifier: GPL-3.0-or-later
// ImageSource over a squashfs file (enroot/Pyxis `.sqsh`), read through sqsh/.
// A squashfs is already flattened: one layer, id "squashfs". The image config
// is what enroot recorded in it: `Env` from /etc/environment, WORKDIR,
// labels and entrypoint/cmd from /etc/rc (domain.md §4), when present.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "inspect/sources/source.h"

namespace trainimg::inspect {

/// Opens the squashfs file at `path` (no "sqsh:" prefix). Validates the super
/// block and tables now; throws trainimg::Error naming `path` (and the offset)
/// when the file is missing, not a squashfs, truncated or uses an unsupported
/// compressor. walk() yields one layer "squashfs", entries depth-first in
/// sorted order; later paths of a hard-linked inode come as EntryType::Hardlink.
std::unique_ptr<ImageSource> open_sqsh_source(const std::string& path);
/// The same on `fd`, which the caller keeps open for the source's life (a
/// file written but not published yet); `name` names it in messages.
std::unique_ptr<ImageSource> open_sqsh_source(int fd, const std::string& name);

/// What enroot recorded of the image config (docker::configure): Env from
/// /etc/environment (one KEY=VALUE a line, image order), labels ("# KEY
/// VALUE"), WORKDIR (`cd "DIR"`), entrypoint and cmd (the two `exec` lines,
/// shell-quoted) from /etc/rc, volumes from /etc/fstab. Missing files are
/// passed as "" and give empty fields; never throws.
ImageConfig parse_enroot_config(const std::string& environment, const std::string& rc, const std::string& fstab);

/// Splits one shell line into words: '…', "…", $'…' (bash ${x@Q}) and
/// backslash escapes. Enough for the lines enroot writes; not a shell.
std::vector<std::string> split_shell_words(const std::string& line);

}  // namespace trainimg::inspect
