// SPDX-License-Identifier: GPL-3.0-or-later
// SHA-256 of image blobs (OCI "sha256:<hex>" digests), through OpenSSL's EVP.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "inspect/registry/registry.h"  // sha256_digest, sha256_file, is_sha256_digest

namespace trainimg::inspect {

class Sha256 {
 public:
  Sha256();
  ~Sha256();
  Sha256(const Sha256&) = delete;
  Sha256& operator=(const Sha256&) = delete;
  void update(const void* data, size_t n);
  void update(std::string_view s) { update(s.data(), s.size()); }
  /// "sha256:<64 lowercase hex>"; the object cannot be updated afterwards.
  std::string digest();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace trainimg::inspect
