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

namespace trainimg::sqsh {
namespace {

// Wraps a compressor so that full-size blocks are stored raw: in the block
// processor every data block is exactly block_size (tails go to fragment
// blocks), so this gives mksquashfs -noD's layout: raw data blocks,
// compressed fragment blocks. (A fragment block that fills up to exactly
// block_size is stored raw too; its header bit says so.)
struct RawFull {
  sqfs_compressor_t base;
  sqfs_compressor_t* inner;
  uint32_t block_size;
};

RawFull* raw_self(sqfs_compressor_t* c) { return reinterpret_cast<RawFull*>(c); }

void raw_get_configuration(const sqfs_compressor_t* base, sqfs_compressor_config_t* cfg) {
  const RawFull* r = reinterpret_cast<const RawFull*>(base);
  r->inner->get_configuration(r->inner, cfg);
}
int raw_write_options(sqfs_compressor_t* base, sqfs_file_t* f) {
  return raw_self(base)->inner->write_options(raw_self(base)->inner, f);
}
int raw_read_options(sqfs_compressor_t* base, sqfs_file_t* f) {
  return raw_self(base)->inner->read_options(raw_self(base)->inner, f);
}
sqfs_s32 raw_do_block(sqfs_compressor_t* base, const sqfs_u8* in, sqfs_u32 size, sqfs_u8* out, sqfs_u32 outsize) {
  RawFull* r = raw_self(base);
  if (size >= r->block_size) return 0;
  return r->inner->do_block(r->inner, in, size, out, outsize);
}
void raw_destroy(sqfs_object_t* base) {
  RawFull* r = reinterpret_cast<RawFull*>(base);
  sqfs_destroy(r->inner);
  delete r;
}
RawFull* raw_make(sqfs_compressor_t* inner, uint32_t block_size);
sqfs_object_t* raw_copy(const sqfs_object_t* base) {
  const RawFull* r = reinterpret_cast<const RawFull*>(base);
  auto* inner = static_cast<sqfs_compressor_t*>(sqfs_copy(r->inner));
  if (!inner) return nullptr;
  RawFull* c = raw_make(inner, r->block_size);
  if (!c) sqfs_destroy(inner);
  return reinterpret_cast<sqfs_object_t*>(c);
}
RawFull* raw_make(sqfs_compressor_t* inner, uint32_t block_size) {
  auto* r = new (std::nothrow) RawFull{};
  if (!r) return nullptr;
  r->base.base.destroy = raw_destroy;
  r->base.base.copy = raw_copy;
  r->base.get_configuration = raw_get_configuration;
  r->base.write_options = raw_write_options;
  r->base.read_options = raw_read_options;
  r->base.do_block = raw_do_block;
  r->inner = inner;
  r->block_size = block_size;
  return r;
}

}  // namespace

CompressorPtr create_raw_data_compressor(const sqfs_compressor_t& inner, uint32_t block_size) {
  auto* copy = static_cast<sqfs_compressor_t*>(sqfs_copy(&inner));
  if (!copy) return nullptr;
  RawFull* r = raw_make(copy, block_size);
  if (!r) {
    sqfs_destroy(copy);
    return nullptr;
  }
  return CompressorPtr(&r->base);
}

}  // namespace trainimg::sqsh
