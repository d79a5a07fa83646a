// SPDX-License-Identifier: GPL-3.0-or-later
// The four files enroot writes into every imported rootfs (domain.md §4;
// NVIDIA/enroot src/docker.sh `docker::configure`, read for the formats only).
// `enroot start` reads them: /etc/environment for the variables, /etc/rc as
// the init script, /etc/rc.local sourced by it (Pyxis writes `exec "$@"`
// there to bypass the entrypoint), /etc/fstab for the volume bind mounts.
// Every function returns the exact bytes enroot produces for the same config.
#pragma once

#include <string>
#include <string_view>

#include "inspect/sources/source.h"

namespace trainimg::builder {

/// /etc/environment: the config `Env` verbatim, one `KEY=VALUE` per line, in
/// image order (enroot substitutes `${VAR}` from the host at start time).
std::string enroot_environment(const inspect::ImageConfig& c);

/// /etc/rc: the provenance comment naming `uri`, each label as a comment
/// (newlines in values become spaces, keys in byte order as the daemon's JSON
/// has them), a blank line, the WORKDIR (default "/") block, the rc.local
/// sourcing block and `exec ENTRYPOINT… "$@"` / `exec ENTRYPOINT… CMD…` with
/// bash `${a[@]@Q}` quoting; `/bin/sh` when both are empty.
///
/// One deliberate difference: enroot reads Entrypoint/Cmd through
/// `readarray`, which splits an element containing a newline into several
/// words; trainimg keeps the element whole (quoted as `$'…\n…'`).
std::string enroot_rc(const inspect::ImageConfig& c, std::string_view uri);

/// /etc/rc.local: enroot's two comment lines.
std::string enroot_rc_local();

/// /etc/fstab: one `${ENROOT_ROOTFS}VOL VOL none x-create=dir,bind,rw,nosuid,nodev`
/// line per volume, sorted and de-duplicated as jq's `keys` gives them.
std::string enroot_fstab(const inspect::ImageConfig& c);

/// The working directory /etc/rc changes to, as enroot derives it: the first
/// line of WorkingDir with surrounding blanks removed (bash `read -r`), "/"
/// when empty. enroot also creates it in the rootfs.
std::string enroot_workdir(const inspect::ImageConfig& c);

/// One word quoted as bash's `${x@Q}` does in a UTF-8 locale: '…' with
/// `'\''` for quotes, or `$'…'` (C escapes, octal for other bytes) when the
/// word holds a control character or bytes that are not valid UTF-8.
std::string bash_quote(std::string_view word);

}  // namespace trainimg::builder
