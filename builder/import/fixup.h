// SPDX-License-Identifier: GPL-3.0-or-later
// What enroot's import does to each file of the flattened image, as pure
// functions on inspect::Entry (domain.md §4, enroot src/docker.sh and
// src/common.sh `common::fixperms`):
//   - `tar -px --exclude='dev/*' --exclude='.dockerenv'`: /dev kept empty,
//     no /.dockerenv, no xattrs (tar without --xattrs), sockets not created;
//   - `chmod -R u+rX` and `find -maxdepth 15 -type d … chmod u+w`;
//   - `mksquashfs -all-root`: every file owned 0:0.
// And what Docker's init layer (daemon/initlayer) puts into every container
// that `docker export` sees, which a layered source lacks.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "inspect/sources/source.h"

namespace trainimg::builder {

struct FixupOptions {
  bool keep_xattrs = false;  ///< --keep-xattrs (enroot drops them all)
};

/// True for what enroot's tar never extracts: anything below /dev, /.dockerenv,
/// and sockets (GNU tar cannot create them).
bool enroot_excludes(const inspect::Entry& e);
bool enroot_excludes(inspect::EntryType type, const std::string& path);

/// enroot's permission fix-up on one mode: u+r always; u+x for directories
/// and for files that have any x bit (`X`); u+w for directories at most 15
/// levels below the root (`find -maxdepth 15`). `depth` counts path
/// components ("/" is 0, "/a" is 1). Symlinks and hard links are unchanged.
uint32_t enroot_fix_mode(inspect::EntryType type, uint32_t mode, size_t depth);

/// Number of components of a normalised path ("/" → 0, "/a/b" → 2).
size_t path_depth(const std::string& path);

/// Applies ownership (0:0), the mode fix-up and the xattr policy in place.
void enroot_fixup(inspect::Entry& e, const FixupOptions& opt);

/// Entries Docker's init layer adds on top of the image, as `docker export`
/// (and so enroot) sees them, minus what enroot excludes: /dev, /etc, /proc,
/// /sys directories (0755; an existing directory is kept as it is, since
/// Docker's MkdirAll runs on the mounted image), empty /etc/hosts,
/// /etc/hostname, /etc/resolv.conf (0755; Docker unlinks the image's file and
/// creates them so) and /etc/mtab -> /proc/mounts. Checked against
/// `docker export` on overlay2. `mtime` is given to all of them.
std::vector<inspect::Entry> docker_init_layer(int64_t mtime);

/// True for the paths whose entry in dockerd's container export `docker
/// create` always writes itself, whatever the image has there, and so stamps
/// with the clock: /.dockerenv, /dev and everything below it, /etc (its init
/// layer's copy hides the image's), /etc/hostname, /etc/hosts,
/// /etc/resolv.conf and /etc/mtab. Not /proc and /sys: the export shows the
/// image's when it has them (checked with `docker export` on overlay2).
bool docker_create_writes(const std::string& path);

/// A directory entry owned by root with mode 0755 (what `mkdir -p` makes).
inspect::Entry make_dir(const std::string& path, int64_t mtime);
/// A regular file entry of `size` bytes, root-owned.
inspect::Entry make_file(const std::string& path, uint32_t mode, uint64_t size, int64_t mtime);

}  // namespace trainimg::builder
