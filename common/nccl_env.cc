// SPDX-License-Identifier: GPL-3.0-or-later
#include "common/nccl_env.h"

#include <cctype>

namespace trainimg::nccl_env {

bool forces_ib_transport(std::string_view key, std::string_view value) {
  if (key != "NCCL_NET" || value.size() != 2) return false;
  return std::toupper(static_cast<unsigned char>(value[0])) == 'I' &&
         std::toupper(static_cast<unsigned char>(value[1])) == 'B';
}

bool is_ib_only_setting(std::string_view key) {
  return key.starts_with("NCCL_IB_") && key != "NCCL_IB_DISABLE";
}

bool plugin_is_ofi(std::string_view value) {
  return value == "ofi";
}

bool names_ofi_plugin_library(std::string_view value) {
  size_t slash = value.rfind('/');
  std::string_view base = slash == std::string_view::npos ? value : value.substr(slash + 1);
  return base.starts_with("libnccl-net-ofi.so");
}

}  // namespace trainimg::nccl_env
