// SPDX-License-Identifier: GPL-3.0-or-later
// The NCCL environment judgements of domain.md §6 (nccl-net-plugin,
// nccl-ib-settings), shared by the Dockerfile lint rules (recipes/rules), the
// recipe checks (recipes/recipe/checks) and the image rules (inspect/rules),
// so that the three verdicts on the same ENV cannot drift apart. Each caller
// words its own message and position; only the judgement lives here.
#pragma once

#include <string_view>

namespace trainimg::nccl_env {

/// NCCL_NET=IB (any case): NCCL's InfiniBand transport forced instead of
/// EFA through the ofi plugin. nccl-ib-settings, error.
bool forces_ib_transport(std::string_view key, std::string_view value);

/// An InfiniBand-only tuning knob: NCCL_IB_* except NCCL_IB_DISABLE (which
/// only turns the IB transport off, harmless on EFA). nccl-ib-settings, warning.
bool is_ib_only_setting(std::string_view key);

/// The value NGC sets and the EFA plugin needs: exactly "ofi". Anything else,
/// the empty string included, makes NCCL miss libnccl-net-ofi.so.
/// nccl-net-plugin, error.
bool plugin_is_ofi(std::string_view value);

/// The OFI plugin named by its library instead of "ofi": `libnccl-net-ofi.so`
/// or a path to it (`/opt/amazon/ofi-nccl/lib/libnccl-net-ofi.so`). NCCL
/// loads a library name or path too, so this is not the InfiniBand fallback;
/// but it is not the seed's `ofi` either (nccl-net-plugin, warning).
bool names_ofi_plugin_library(std::string_view value);

}  // namespace trainimg::nccl_env
