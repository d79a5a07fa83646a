// SPDX-License-Identifier: GPL-3.0-or-later
#include "sqsh/compressor.h"

#include <cstring>
#include <new>

namespace trainimg::sqsh {

int create_compressor(const sqfs_compressor_config_t& cfg, CompressorPtr& out) {
  if (cfg.id == SQFS_COMP_LZO) return create_lzo_compressor(cfg, out);
  sqfs_compressor_t* c = nullptr;
  int rc = sqfs_compressor_create(&cfg, &c);
  if (rc == 0) out.reset(c);
  return rc;
}

namespace {

struct Store {
  sqfs_compressor_t base;
  sqfs_compressor_config_t cfg;
};

void store_get_configuration(const sqfs_compressor_t* base, sqfs_compressor_config_t* cfg) {
  *cfg = reinterpret_cast<const Store*>(base)->cfg;
}
int store_write_options(sqfs_compressor_t*, sqfs_file_t*) { return 0; }
int store_read_options(sqfs_compressor_t*, sqfs_file_t*) { return 0; }
// 0 = "not smaller than the input": the caller stores the block raw.
sqfs_s32 store_do_block(sqfs_compressor_t*, const sqfs_u8*, sqfs_u32, sqfs_u8*, sqfs_u32) {
  return 0;
}
void store_destroy(sqfs_object_t* base) { delete reinterpret_cast<Store*>(base); }
sqfs_object_t* store_copy(const sqfs_object_t* base) {
  auto* c = new (std::nothrow) Store(*reinterpret_cast<const Store*>(base));
  return reinterpret_cast<sqfs_object_t*>(c);
}

}  // namespace

CompressorPtr create_store_compressor(const sqfs_compressor_config_t& cfg) {
  auto* s = new (std::nothrow) Store{};
  if (!s) return nullptr;
  s->cfg = cfg;
  s->base.base.destroy = store_destroy;
  s->base.base.copy = store_copy;
  s->base.get_configuration = store_get_configuration;
  s->base.write_options = store_write_options;
  s->base.read_options = store_read_options;
  s->base.do_block = store_do_block;
  return CompressorPtr(&s->base);
}

}  // namespace trainimg::sqsh
