// SPDX-License-Identifier: GPL-3.0-or-later
// SHA-256 through OpenSSL's libcrypto: image blobs, manifests, profile
// digests ("sha256:<64 lowercase hex>").
#pragma once

#include <memory>
#include <string>
#include <string_view>

namespace trainimg {

/// A digest computed piece by piece (blobs as they stream).
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

/// "sha256:<hex>" of `data`.
std::string sha256_digest(std::string_view data);

/// "sha256:<hex>" of the whole file at `path` (read once, front to back);
/// throws Error naming it when it cannot be read.
std::string sha256_file(const std::string& path);
/// The same for the file open on `fd`, read with pread(2) from its start to
/// its end (the descriptor's offset is left alone, so others may share it);
/// `name` names it in errors.
std::string sha256_fd(int fd, const std::string& name);

/// True for "sha256:" followed by exactly 64 lowercase hex digits: the only
/// digests accepted as blob names, so a digest can never name a path such as
/// "sha256:../../etc/passwd".
bool is_sha256_digest(std::string_view d);

}  // namespace trainimg
