// SPDX-License-Identifier: GPL-3.0-or-later
#include "common/nccl_env.h"

#include <gtest/gtest.h>

namespace trainimg::nccl_env {
namespace {

TEST(NcclEnv, IbTransportIsNcclNetIbInAnyCaseOnly) {
  EXPECT_TRUE(forces_ib_transport("NCCL_NET", "IB"));
  EXPECT_TRUE(forces_ib_transport("NCCL_NET", "ib"));
  EXPECT_TRUE(forces_ib_transport("NCCL_NET", "Ib"));
  EXPECT_FALSE(forces_ib_transport("NCCL_NET", "Socket"));
  EXPECT_FALSE(forces_ib_transport("NCCL_NET", "IBX"));
  EXPECT_FALSE(forces_ib_transport("NCCL_NET", ""));
  EXPECT_FALSE(forces_ib_transport("NCCL_NET_PLUGIN", "IB"));
  EXPECT_FALSE(forces_ib_transport("nccl_net", "IB"));  // environment names are case-sensitive
}

TEST(NcclEnv, IbOnlySettingsAreNcclIbStarButNotDisable) {
  EXPECT_TRUE(is_ib_only_setting("NCCL_IB_HCA"));
  EXPECT_TRUE(is_ib_only_setting("NCCL_IB_GID_INDEX"));
  EXPECT_TRUE(is_ib_only_setting("NCCL_IB_DISABLE_X"));
  EXPECT_FALSE(is_ib_only_setting("NCCL_IB_DISABLE"));
  EXPECT_FALSE(is_ib_only_setting("NCCL_IB"));
  EXPECT_FALSE(is_ib_only_setting("NCCL_NET"));
  EXPECT_FALSE(is_ib_only_setting("XNCCL_IB_HCA"));
}

TEST(NcclEnv, PluginMustBeExactlyOfi) {
  EXPECT_TRUE(plugin_is_ofi("ofi"));
  EXPECT_FALSE(plugin_is_ofi(""));
  EXPECT_FALSE(plugin_is_ofi("OFI"));
  EXPECT_FALSE(plugin_is_ofi("aws-ofi"));
  EXPECT_FALSE(plugin_is_ofi("ofi "));
}

}  // namespace
}  // namespace trainimg::nccl_env
