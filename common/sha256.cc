// SPDX-License-Identifier: GPL-3.0-or-later
#include "common/sha256.h"

#include <fcntl.h>
#include <openssl/evp.h>
#include <unistd.h>

#include <cerrno>
#include <stdexcept>
#include <vector>

#include "common/error.h"
#include "common/fd.h"

namespace trainimg {

struct Sha256::Impl {
  struct Free {
    void operator()(EVP_MD_CTX* c) const { EVP_MD_CTX_free(c); }
  };
  std::unique_ptr<EVP_MD_CTX, Free> ctx{EVP_MD_CTX_new()};
};

Sha256::Sha256() : impl_(std::make_unique<Impl>()) {
  if (!impl_->ctx || EVP_DigestInit_ex(impl_->ctx.get(), EVP_sha256(), nullptr) != 1)
    throw std::runtime_error("OpenSSL: cannot initialise SHA-256");
}

Sha256::~Sha256() = default;

void Sha256::update(const void* data, size_t n) {
  if (n > 0) EVP_DigestUpdate(impl_->ctx.get(), data, n);
}

std::string Sha256::digest() {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_DigestFinal_ex(impl_->ctx.get(), md, &len);
  static const char kHex[] = "0123456789abcdef";
  std::string out = "sha256:";
  for (unsigned i = 0; i < len; ++i) {
    out += kHex[md[i] >> 4];
    out += kHex[md[i] & 15];
  }
  return out;
}

std::string sha256_digest(std::string_view data) {
  Sha256 h;
  h.update(data);
  return h.digest();
}

std::string sha256_file(const std::string& path) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd) throw_errno(path, "cannot read");
  return sha256_fd(fd.get(), path);
}

std::string sha256_fd(int fd, const std::string& name) {
  (void)posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
  Sha256 h;
  std::vector<char> buf(1u << 20);
  for (off_t at = 0;;) {
    ssize_t n = ::pread(fd, buf.data(), buf.size(), at);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw_errno(name, "read");
    if (n == 0) break;
    h.update(buf.data(), static_cast<size_t>(n));
    at += n;
  }
  return h.digest();
}

bool is_sha256_digest(std::string_view d) {
  constexpr std::string_view kPrefix = "sha256:";
  if (!d.starts_with(kPrefix) || d.size() != kPrefix.size() + 64) return false;
  for (char c : d.substr(kPrefix.size()))
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  return true;
}

}  // namespace trainimg
