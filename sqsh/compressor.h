// SPDX-License-Identifier: GPL-3.0-or-later
// Compressor construction. libsquashfs 1.2.0 (Debian) has no LZO (licence):
// sqfs_compressor_create answers SQFS_ERROR_UNSUPPORTED, so LZO goes through
// our own sqfs_compressor_t backed by Debian's liblzo2 (lzo_compressor.cc).
// Internal to sqsh/.
#pragma once

#include "sqsh/handles.h"

namespace trainimg {
class CpuSlots;
}

namespace trainimg::sqsh {

/// Creates a compressor (or, with SQFS_COMP_FLAG_UNCOMPRESS, a decompressor)
/// for `cfg`. Returns 0 or a negative SQFS_ERROR; `out` is set on success.
int create_compressor(const sqfs_compressor_config_t& cfg, CompressorPtr& out);

/// The liblzo2-backed LZO compressor. cfg.opt.lzo.algorithm is an
/// SQFS_LZO_ALGORITHM; cfg.level is 1..9 for lzo1x_999 and 0 for the others.
/// read_options/write_options handle the squashfs LZO options block
/// (u32 algorithm, u32 level), written only for non-default settings (as
/// mksquashfs does: lzo1x_999 level 8 is the default).
int create_lzo_compressor(const sqfs_compressor_config_t& cfg, CompressorPtr& out);

/// A compressor that never compresses ("result not smaller than input"), so
/// every meta data block is stored raw: `--compression none`.
CompressorPtr create_store_compressor(const sqfs_compressor_config_t& cfg);

/// For the block processor: a copy of `inner` that
///  - with `raw_block_size` (images like `mksquashfs -noD`), stores blocks of
///    that many bytes (data blocks) raw and still compresses the shorter
///    fragment blocks;
///  - with `slots`, holds one of them while it compresses a block (--jobs as
///    a cap on the threads at work, common/cpu_slots.h).
/// Null on allocation failure.
CompressorPtr create_data_compressor(const sqfs_compressor_t& inner, uint32_t raw_block_size,
                                     CpuSlots* slots);

/// A copy of decompressor `inner` that keeps the last meta data blocks it
/// decompressed (direct-mapped, keyed by the exact compressed bytes), for the
/// inode and directory readers of a walk. Null on allocation failure.
CompressorPtr create_meta_cache_decompressor(const sqfs_compressor_t& inner);

}  // namespace trainimg::sqsh
