// SPDX-License-Identifier: GPL-3.0-or-later
// Registry image references, as `docker://` spells them.
//
// Two forms are read:
//  - enroot's (NVIDIA/enroot src/docker.sh): `[USER@][REGISTRY#]IMAGE[:TAG][@sha256:DIGEST]`,
//    e.g. `nvcr.io#nvidia/pytorch:26.08-py3`; `USER@` is only recognised
//    before `#` (or, without `#`, before anything that looks like an image);
//  - Docker's/skopeo's: `REGISTRY/IMAGE[:TAG][@sha256:DIGEST]` when the first
//    path component contains `.` or `:` or is `localhost`.
// Defaults as enroot's: registry `registry-1.docker.io` (also for `docker.io`
// and `index.docker.io`), `library/` for a one-component Docker Hub name,
// tag `latest` when neither tag nor digest is given. A trailing
// `@sha256:<64 hex>` is always a digest.
#pragma once

#include <string>

namespace trainimg::inspect::registry {

struct Reference {
  std::string user;        ///< enroot's USER@ (a login to look credentials up with); may be empty
  std::string registry;    ///< host[:port], e.g. "nvcr.io", "127.0.0.1:5500"
  std::string repository;  ///< e.g. "nvidia/pytorch", "library/ubuntu"
  std::string tag;         ///< "latest" when neither tag nor digest was given; may be empty with a digest
  std::string digest;      ///< "sha256:<64 hex>" when pinned, else empty

  /// What the manifest request names: the digest when pinned, else the tag.
  std::string manifest_ref() const { return digest.empty() ? tag : digest; }
  /// "REGISTRY/REPOSITORY[:TAG][@DIGEST]" (no user): the form messages use.
  std::string str() const;
};

/// Parses what follows `docker://`. Throws Error("docker://" + text,
/// "invalid registry reference: <why> (at character N)") on bad input.
Reference parse_reference(const std::string& text);

}  // namespace trainimg::inspect::registry
