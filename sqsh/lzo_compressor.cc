// SPDX-License-Identifier: GPL-3.0-or-later
// squashfs LZO through liblzo2, matching mksquashfs 4.x's lzo wrapper: the
// algorithms lzo1x_1, lzo1x_1_11, lzo1x_1_12, lzo1x_1_15 and lzo1x_999 (with
// levels 1..9, default 8), and the 8-byte options block after the super block.
#include <lzo/lzo1x.h>

#include <cstring>
#include <mutex>
#include <new>
#include <vector>

#include "sqsh/compressor.h"

namespace trainimg::sqsh {
namespace {

using CompressFn = int (*)(const lzo_bytep, lzo_uint, lzo_bytep, lzo_uintp, lzo_voidp);

struct Algorithm {
  CompressFn compress;
  size_t work_size;
};

const Algorithm kAlgorithms[] = {
    {lzo1x_1_compress, LZO1X_1_MEM_COMPRESS},
    {lzo1x_1_11_compress, LZO1X_1_11_MEM_COMPRESS},
    {lzo1x_1_12_compress, LZO1X_1_12_MEM_COMPRESS},
    {lzo1x_1_15_compress, LZO1X_1_15_MEM_COMPRESS},
    {lzo1x_999_compress, LZO1X_999_MEM_COMPRESS},
};
constexpr unsigned kNumAlgorithms = sizeof(kAlgorithms) / sizeof(kAlgorithms[0]);

// liblzo2 does not bound its output: the worst case for incompressible input.
constexpr size_t lzo_max_size(size_t n) { return n + n / 16 + 64 + 3; }

struct OptionsBlock {
  uint32_t algorithm;
  uint32_t level;
};
constexpr uint16_t kOptionsHeader = 0x8000 | sizeof(OptionsBlock);  // uncompressed, 8 bytes

// sqfs_compressor_t must come first: libsquashfs only sees the base.
struct Lzo {
  sqfs_compressor_t base;
  uint32_t block_size = 0;
  uint32_t algorithm = SQFS_LZO_DEFAULT_ALG;
  uint32_t level = SQFS_LZO_DEFAULT_LEVEL;
  bool uncompress = false;
  std::vector<unsigned char> work;     // lzo work memory
  std::vector<unsigned char> scratch;  // worst-case output, copied when it fits
};

Lzo* self(sqfs_compressor_t* c) { return reinterpret_cast<Lzo*>(c); }
const Lzo* self(const sqfs_compressor_t* c) { return reinterpret_cast<const Lzo*>(c); }

bool valid(uint32_t algorithm, uint32_t level) {
  if (algorithm >= kNumAlgorithms) return false;
  if (algorithm == SQFS_LZO1X_999) return level >= 1 && level <= 9;
  return level == 0;
}

void lzo_get_configuration(const sqfs_compressor_t* base, sqfs_compressor_config_t* cfg) {
  const Lzo* z = self(base);
  std::memset(cfg, 0, sizeof(*cfg));
  cfg->id = SQFS_COMP_LZO;
  cfg->block_size = z->block_size;
  cfg->level = z->level;
  cfg->opt.lzo.algorithm = static_cast<sqfs_u16>(z->algorithm);
  if (z->uncompress) cfg->flags |= SQFS_COMP_FLAG_UNCOMPRESS;
}

int lzo_write_options(sqfs_compressor_t* base, sqfs_file_t* file) {
  const Lzo* z = self(base);
  if (z->algorithm == SQFS_LZO_DEFAULT_ALG && z->level == SQFS_LZO_DEFAULT_LEVEL) return 0;
  unsigned char buf[2 + sizeof(OptionsBlock)];
  // squashfs is little-endian; so are the hosts we build for (x86-64, arm64).
  uint16_t header = kOptionsHeader;
  OptionsBlock opt{z->algorithm, z->algorithm == SQFS_LZO1X_999 ? z->level : 0};
  std::memcpy(buf, &header, 2);
  std::memcpy(buf + 2, &opt, sizeof(opt));
  int rc = file->write_at(file, sizeof(sqfs_super_t), buf, sizeof(buf));
  return rc != 0 ? rc : static_cast<int>(sizeof(buf));
}

int lzo_read_options(sqfs_compressor_t* base, sqfs_file_t* file) {
  Lzo* z = self(base);
  unsigned char buf[2 + sizeof(OptionsBlock)];
  int rc = file->read_at(file, sizeof(sqfs_super_t), buf, sizeof(buf));
  if (rc != 0) return rc;
  uint16_t header;
  OptionsBlock opt;
  std::memcpy(&header, buf, 2);
  std::memcpy(&opt, buf + 2, sizeof(opt));
  if (header != kOptionsHeader) return SQFS_ERROR_CORRUPTED;
  if (!valid(opt.algorithm, opt.level)) return SQFS_ERROR_UNSUPPORTED;
  z->algorithm = opt.algorithm;
  z->level = opt.level;
  return 0;
}

sqfs_s32 lzo_compress(sqfs_compressor_t* base, const sqfs_u8* in, sqfs_u32 size, sqfs_u8* out,
                      sqfs_u32 outsize) {
  Lzo* z = self(base);
  if (size > z->scratch.size() || lzo_max_size(size) > z->scratch.size()) return 0;
  lzo_uint len = z->scratch.size();
  int rc;
  if (z->algorithm == SQFS_LZO1X_999 && z->level != SQFS_LZO_DEFAULT_LEVEL) {
    rc = lzo1x_999_compress_level(in, size, z->scratch.data(), &len, z->work.data(), nullptr, 0,
                                  nullptr, static_cast<int>(z->level));
  } else {
    rc = kAlgorithms[z->algorithm].compress(in, size, z->scratch.data(), &len, z->work.data());
  }
  if (rc != LZO_E_OK) return SQFS_ERROR_COMPRESSOR;
  if (len >= size || len > outsize) return 0;  // store uncompressed
  std::memcpy(out, z->scratch.data(), len);
  return static_cast<sqfs_s32>(len);
}

sqfs_s32 lzo_uncompress(sqfs_compressor_t*, const sqfs_u8* in, sqfs_u32 size, sqfs_u8* out,
                        sqfs_u32 outsize) {
  lzo_uint len = outsize;
  // The _safe variant checks both input and output bounds: hostile images.
  int rc = lzo1x_decompress_safe(in, size, out, &len, nullptr);
  if (rc == LZO_E_OUTPUT_OVERRUN) return 0;
  if (rc != LZO_E_OK) return SQFS_ERROR_COMPRESSOR;
  return static_cast<sqfs_s32>(len);
}

void lzo_destroy(sqfs_object_t* base) { delete reinterpret_cast<Lzo*>(base); }

sqfs_object_t* lzo_copy(const sqfs_object_t* base) {
  // Block processor workers each get a copy: own work memory and scratch.
  try {
    return reinterpret_cast<sqfs_object_t*>(new Lzo(*reinterpret_cast<const Lzo*>(base)));
  } catch (const std::bad_alloc&) {
    return nullptr;
  }
}

}  // namespace

int create_lzo_compressor(const sqfs_compressor_config_t& cfg, CompressorPtr& out) {
  static std::once_flag init;
  static int init_rc = LZO_E_OK;
  std::call_once(init, [] { init_rc = lzo_init(); });
  if (init_rc != LZO_E_OK) return SQFS_ERROR_INTERNAL;

  if (cfg.flags & ~SQFS_COMP_FLAG_GENERIC_ALL) return SQFS_ERROR_UNSUPPORTED;
  bool uncompress = cfg.flags & SQFS_COMP_FLAG_UNCOMPRESS;
  uint32_t algorithm = cfg.opt.lzo.algorithm;
  uint32_t level = cfg.level;
  // A decompressor's settings come from the options block (or the defaults).
  if (!uncompress && !valid(algorithm, level)) return SQFS_ERROR_UNSUPPORTED;
  if (uncompress && !valid(algorithm, level)) {
    algorithm = SQFS_LZO_DEFAULT_ALG;
    level = SQFS_LZO_DEFAULT_LEVEL;
  }
  try {
    auto z = std::make_unique<Lzo>();
    z->block_size = cfg.block_size;
    z->algorithm = algorithm;
    z->level = level;
    z->uncompress = uncompress;
    if (!uncompress) {
      size_t n = cfg.block_size < SQFS_META_BLOCK_SIZE ? SQFS_META_BLOCK_SIZE : cfg.block_size;
      z->scratch.resize(lzo_max_size(n));
      // Every algorithm's work memory fits the largest (999) one; the copy
      // keeps it valid if a read_options call switches algorithms later.
      z->work.resize(LZO1X_999_MEM_COMPRESS);
    }
    z->base.base.destroy = lzo_destroy;
    z->base.base.copy = lzo_copy;
    z->base.get_configuration = lzo_get_configuration;
    z->base.write_options = lzo_write_options;
    z->base.read_options = lzo_read_options;
    z->base.do_block = uncompress ? lzo_uncompress : lzo_compress;
    out.reset(&z.release()->base);
    return 0;
  } catch (const std::bad_alloc&) {
    return SQFS_ERROR_ALLOC;
  }
}

}  // namespace trainimg::sqsh
