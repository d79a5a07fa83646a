// SPDX-License-Identifier: GPL-3.0-or-later
#include "sqsh/compressor.h"

#include <cstring>
#include <new>

#include "common/cpu_slots.h"
#include "common/cpus.h"

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
int store_write_options(sqfs_compressor_t*, sqfs_file_t*) {
  return 0;
}
int store_read_options(sqfs_compressor_t*, sqfs_file_t*) {
  return 0;
}
// 0 = "not smaller than the input": the caller stores the block raw.
sqfs_s32 store_do_block(sqfs_compressor_t*, const sqfs_u8*, sqfs_u32, sqfs_u8*, sqfs_u32) {
  return 0;
}
void store_destroy(sqfs_object_t* base) {
  delete reinterpret_cast<Store*>(base);
}
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

// The block processor's compressor wrapped (create_data_compressor):
// full-size blocks stored raw where `raw_block_size` is set, and a CpuSlot
// held around each compression where `slots` is.
//
// Raw full-size blocks: in the block processor every data block is exactly
// block_size (tails go to fragment blocks), so this gives mksquashfs -noD's
// layout: raw data blocks, compressed fragment blocks. (A fragment block that
// fills up to exactly block_size is stored raw too; its header bit says so.)
struct DataCmp {
  sqfs_compressor_t base;
  sqfs_compressor_t* inner;
  uint32_t raw_block_size;  // 0: compress every block
  CpuSlots* slots;
};

DataCmp* data_self(sqfs_compressor_t* c) {
  return reinterpret_cast<DataCmp*>(c);
}

void data_get_configuration(const sqfs_compressor_t* base, sqfs_compressor_config_t* cfg) {
  const DataCmp* r = reinterpret_cast<const DataCmp*>(base);
  r->inner->get_configuration(r->inner, cfg);
}
int data_write_options(sqfs_compressor_t* base, sqfs_file_t* f) {
  return data_self(base)->inner->write_options(data_self(base)->inner, f);
}
int data_read_options(sqfs_compressor_t* base, sqfs_file_t* f) {
  return data_self(base)->inner->read_options(data_self(base)->inner, f);
}
sqfs_s32 data_do_block(sqfs_compressor_t* base, const sqfs_u8* in, sqfs_u32 size, sqfs_u8* out,
                       sqfs_u32 outsize) {
  DataCmp* r = data_self(base);
  if (r->raw_block_size && size >= r->raw_block_size) return 0;
  // A block processor's worker is named on its first block (a layer's reader
  // compressing inline keeps its own name).
  name_this_thread("ti-compress", true);
  CpuSlot busy(r->slots);
  return r->inner->do_block(r->inner, in, size, out, outsize);
}
void data_destroy(sqfs_object_t* base) {
  DataCmp* r = reinterpret_cast<DataCmp*>(base);
  sqfs_destroy(r->inner);
  delete r;
}
DataCmp* data_make(sqfs_compressor_t* inner, uint32_t raw_block_size, CpuSlots* slots);
sqfs_object_t* data_copy(const sqfs_object_t* base) {
  const DataCmp* r = reinterpret_cast<const DataCmp*>(base);
  auto* inner = static_cast<sqfs_compressor_t*>(sqfs_copy(r->inner));
  if (!inner) return nullptr;
  DataCmp* c = data_make(inner, r->raw_block_size, r->slots);
  if (!c) sqfs_destroy(inner);
  return reinterpret_cast<sqfs_object_t*>(c);
}
DataCmp* data_make(sqfs_compressor_t* inner, uint32_t raw_block_size, CpuSlots* slots) {
  auto* r = new (std::nothrow) DataCmp{};
  if (!r) return nullptr;
  r->base.base.destroy = data_destroy;
  r->base.base.copy = data_copy;
  r->base.get_configuration = data_get_configuration;
  r->base.write_options = data_write_options;
  r->base.read_options = data_read_options;
  r->base.do_block = data_do_block;
  r->inner = inner;
  r->raw_block_size = raw_block_size;
  r->slots = slots;
  return r;
}

}  // namespace

CompressorPtr create_data_compressor(const sqfs_compressor_t& inner, uint32_t raw_block_size,
                                     CpuSlots* slots) {
  auto* copy = static_cast<sqfs_compressor_t*>(sqfs_copy(&inner));
  if (!copy) return nullptr;
  DataCmp* r = data_make(copy, raw_block_size, slots);
  if (!r) {
    sqfs_destroy(copy);
    return nullptr;
  }
  return CompressorPtr(&r->base);
}

}  // namespace trainimg::sqsh
