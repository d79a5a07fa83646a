// SPDX-License-Identifier: GPL-3.0-or-later
// A decompressor that remembers recent meta data blocks. libsquashfs's
// meta data readers keep one decompressed block each; a walk that alternates
// between a directory's listing, its children's inodes and its subtrees
// decompresses the same 8 KiB blocks again and again (5.3x the blocks in a
// 200,000-file image: 7,264 decompressions where unsquashfs needs 1,362).
// This wrapper answers a repeated block from a small direct-mapped cache,
// keyed by the compressed bytes themselves (hash, then an exact compare), so
// it can never return another block's data.
#include <cstring>
#include <functional>
#include <new>
#include <string_view>
#include <vector>

#include "sqsh/compressor.h"

namespace trainimg::sqsh {
namespace {

constexpr size_t kSlots = 256;  // 256 x (8 KiB out + the compressed in) <= ~4 MiB

struct Slot {
  bool valid = false;
  size_t hash = 0;
  std::vector<sqfs_u8> in, out;
};

struct MetaCache {
  sqfs_compressor_t base;  // first: libsquashfs only sees the base
  sqfs_compressor_t* inner;
  std::vector<Slot> slots;
};

MetaCache* self(sqfs_compressor_t* c) {
  return reinterpret_cast<MetaCache*>(c);
}

void mc_get_configuration(const sqfs_compressor_t* base, sqfs_compressor_config_t* cfg) {
  const auto* m = reinterpret_cast<const MetaCache*>(base);
  m->inner->get_configuration(m->inner, cfg);
}
int mc_write_options(sqfs_compressor_t* base, sqfs_file_t* f) {
  return self(base)->inner->write_options(self(base)->inner, f);
}
int mc_read_options(sqfs_compressor_t* base, sqfs_file_t* f) {
  return self(base)->inner->read_options(self(base)->inner, f);
}

sqfs_s32 mc_do_block(sqfs_compressor_t* base, const sqfs_u8* in, sqfs_u32 size, sqfs_u8* out,
                     sqfs_u32 outsize) {
  MetaCache* m = self(base);
  if (outsize > SQFS_META_BLOCK_SIZE) return m->inner->do_block(m->inner, in, size, out, outsize);
  const size_t h = std::hash<std::string_view>{}(std::string_view(reinterpret_cast<const char*>(in), size));
  Slot& s = m->slots[h % kSlots];
  if (s.valid && s.hash == h && s.in.size() == size && s.out.size() <= outsize &&
      std::memcmp(s.in.data(), in, size) == 0) {
    std::memcpy(out, s.out.data(), s.out.size());
    return static_cast<sqfs_s32>(s.out.size());
  }
  sqfs_s32 rc = m->inner->do_block(m->inner, in, size, out, outsize);
  if (rc > 0) {
    try {
      s.in.assign(in, in + size);
      s.out.assign(out, out + rc);
      s.hash = h;
      s.valid = true;
    } catch (const std::bad_alloc&) {
      s.valid = false;  // a cache, not a requirement
    }
  }
  return rc;
}

void mc_destroy(sqfs_object_t* base) {
  auto* m = reinterpret_cast<MetaCache*>(base);
  sqfs_destroy(m->inner);
  delete m;
}

MetaCache* mc_make(sqfs_compressor_t* inner);
sqfs_object_t* mc_copy(const sqfs_object_t* base) {
  const auto* m = reinterpret_cast<const MetaCache*>(base);
  auto* inner = static_cast<sqfs_compressor_t*>(sqfs_copy(m->inner));
  if (!inner) return nullptr;
  MetaCache* c = mc_make(inner);
  if (!c) sqfs_destroy(inner);
  return reinterpret_cast<sqfs_object_t*>(c);
}

MetaCache* mc_make(sqfs_compressor_t* inner) {
  auto* m = new (std::nothrow) MetaCache{};
  if (!m) return nullptr;
  try {
    m->slots.resize(kSlots);
  } catch (const std::bad_alloc&) {
    delete m;
    return nullptr;
  }
  m->base.base.destroy = mc_destroy;
  m->base.base.copy = mc_copy;
  m->base.get_configuration = mc_get_configuration;
  m->base.write_options = mc_write_options;
  m->base.read_options = mc_read_options;
  m->base.do_block = mc_do_block;
  m->inner = inner;
  return m;
}

}  // namespace

CompressorPtr create_meta_cache_decompressor(const sqfs_compressor_t& inner) {
  auto* copy = static_cast<sqfs_compressor_t*>(sqfs_copy(&inner));
  if (!copy) return nullptr;
  MetaCache* m = mc_make(copy);
  if (!m) {
    sqfs_destroy(copy);
    return nullptr;
  }
  return CompressorPtr(&m->base);
}

}  // namespace trainimg::sqsh
