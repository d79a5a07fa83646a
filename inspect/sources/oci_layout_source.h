// SPDX-License-Identifier: GPL-3.0-or-later
// ImageSource over an OCI image layout directory (`oci:DIR[:TAG]`) or a tar of
// one (`oci-archive:FILE[:TAG]`):
// oci-layout, index.json, blobs/sha256/<hex>. index.json → (image index →)
// image manifest; an index picks linux/amd64 (TRAINIMG_PLATFORM=os/arch
// overrides). TAG matches the `org.opencontainers.image.ref.name` annotation.
// Layer media types: OCI and Docker tar, tar+gzip, tar+zstd.
//
// Every blob read is verified: its size against the descriptor before it is
// opened, its sha256 as it is read (layers are read through, not seeked, so
// that every byte is hashed). Blobs are opened relative to the layout with
// O_NOFOLLOW: a blob that is a symlink (to /etc/passwd, say) is refused.
#pragma once

#include <memory>
#include <string>

#include "common/fd.h"
#include "inspect/sources/source.h"
#include "inspect/sources/tar_layer.h"

namespace trainimg::inspect {

/// `spec` is "DIR" or "DIR:TAG". Reads and verifies index.json, the manifest
/// and the config now; throws trainimg::Error naming DIR and the blob.
std::unique_ptr<ImageSource> open_oci_layout_source(const std::string& spec);

/// `oci-archive:FILE[:TAG]`: the same layout as one uncompressed tar (what
/// `skopeo copy … oci-archive:` and BuildKit's `--output type=oci` write),
/// read in place through its member index.
std::unique_ptr<ImageSource> open_oci_archive_source(const std::string& spec);
/// An archive already indexed (a tar probed as a docker archive that has an
/// OCI layout and no manifest.json).
std::unique_ptr<ImageSource> open_oci_archive_source(const std::string& path, const std::string& tag,
                                                     UniqueFd fd, TarIndex index);

}  // namespace trainimg::inspect
