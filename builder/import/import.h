// SPDX-License-Identifier: GPL-3.0-or-later
// `trainimg import SOURCE -o OUT.sqsh`: an image (dockerd://, docker-archive:,
// oci:, dir:) streamed into an enroot-compatible squashfs, published
// atomically with a sidecar (docs/import.md). Included by builder/builder.h.
#pragma once

#include <cstdint>
#include <functional>
#include <iosfwd>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "common/report.h"
#include "inspect/sources/source.h"
#include "sqsh/sqsh.h"

namespace trainimg::builder {

struct ImportOptions {
  std::string source;  ///< "dockerd://IMG", "docker-archive:PATH", "oci:DIR[:TAG]", "dir:ROOTFS", or a path
  std::string output;  ///< OUT.sqsh
  sqsh::Compressor compressor = sqsh::Compressor::Zstd;
  std::optional<int> level;        ///< default: zstd 3 (Pyxis's caching importer)
  uint32_t block_size = 1u << 20;  ///< 1 MiB (Pyxis's caching importer: -b 1M)
  unsigned jobs = 0;               ///< compressor threads; 0 = usable_cpus()
  bool force = false;              ///< replace an existing OUT atomically
  bool enroot_defaults = false;    ///< enroot's layout: -comp lzo -noD, 128 KiB blocks
  bool keep_xattrs = false;        ///< enroot drops every xattr
  /// Inspect the published image (inspect/inspect.h, no expectations) and
  /// record the verdict in the sidecar under "inspect".
  bool inspect = true;
  /// --via enroot: the real `enroot import` makes the image (builder/import/via_enroot.h).
  bool via_enroot = false;
  /// SOURCE_DATE_EPOCH: the mtime of generated files and the super block,
  /// and the clamp for every other mtime. Unset: the newest mtime in the image.
  std::optional<int64_t> source_date_epoch;
  /// /etc/rc's provenance line names the image's config digest (its image
  /// id) instead of `source`, so the output is a function of the image, not
  /// of how it was reached. Implied by source_date_epoch; set for the
  /// shared Pyxis cache. Sources without a config digest (dir:) keep `source`.
  bool provenance_by_digest = false;
  /// Record the SHA-256 of the published .sqsh in the sidecar
  /// ("sqsh_sha256"), taken right after the image is written and before the
  /// sidecar makes it usable (while the inspection runs): what `trainimg
  /// cache verify` checks the file against later.
  bool content_digest = false;
  /// Block reuse (docs/import.md): earlier images made by `trainimg import`
  /// (each with its OUT.sqsh.index). The one sharing the most lowest layers
  /// with this image lends the blocks of every file those layers give; a
  /// candidate that cannot serve (no index, damaged, another compressor) is
  /// named in a note and the import goes on without it.
  std::vector<std::string> reuse;
  /// Write OUT.sqsh.index for later imports to reuse (layered sources whose
  /// layers are content-addressed).
  bool write_index = true;
  /// How a docker:// source is fetched (platform, blob cache, connections).
  inspect::SourceOptions sources;
};

/// One progress event. Phases: resolve, download (registry sources only;
/// its events arrive from the download threads while merge and data run),
/// merge, data, finish, verify, inspect, done. For "download", files/bytes
/// count the layer blobs ready (downloaded and verified, or cached) of
/// total_files/total_bytes, the manifest's; for "merge", every version of a
/// file compressed as its layer is read (some a later layer replaces; no
/// totals yet); from "data" on, the image's files with bytes whose data is
/// placed, of total_files/total_bytes (a single pass: no totals).
struct ImportProgress {
  std::string phase;
  std::string image_digest;  ///< the resolved manifest digest; empty when the source has none
  uint64_t files = 0;        ///< regular files written so far (download: layer blobs ready)
  uint64_t bytes = 0;        ///< their bytes so far (download: blob bytes ready)
  uint64_t total_files = 0;  ///< known after a merge pass; 0 when streaming (download: layers)
  uint64_t total_bytes = 0;
  /// Phase "reuse" only: what block reuse takes from an earlier image
  /// ({"from", "layers", "layer_ids", "files", "bytes", "bytes_not_fetched"}).
  nlohmann::ordered_json reuse;
};
using ImportProgressFn = std::function<void(const ImportProgress&)>;

struct ImportResult {
  std::string output;  ///< the published path
  sqsh::ImageInfo info;
  uint64_t image_bytes = 0;
  uint64_t input_bytes = 0;  ///< file bytes written into the image
  uint64_t files = 0, entries = 0;
  /// Walks of the source: 1; 2 when a single pass had to start again, or
  /// block reuse read a shared layer for a file the earlier image lacks.
  unsigned passes = 1;
  /// Why a --reuse candidate was not used, or what the index could not do;
  /// the command prints them as notes (also in the sidecar's "reuse").
  std::vector<std::string> notes;
  nlohmann::ordered_json sidecar;
  /// The inspection of the published image (opt.inspect, and it could be
  /// read): what the sidecar's "inspect" verdict summarises.
  std::optional<Report> report;
};

/// Prints progress on `err`: "json" as trainimg.import-progress/v1 lines,
/// "tty" (or "auto" when `err_is_tty`) as one rewritten line, else nothing.
ImportProgressFn import_progress_printer(const std::string& mode, std::ostream& err, bool err_is_tty);

/// `OUT.sqsh` -> `OUT.sqsh.index`: the block-reuse index written beside an
/// imported image (builder/import/reuse_index.h; docs/import.md).
std::string reuse_index_path(const std::string& image_path);

/// Two lines for people: size, compression, files, inodes, passes, sidecar.
std::string import_summary(const ImportResult& r);

/// Runs the whole import and publishes OUT and OUT.json. Throws Error (and
/// builder::Interrupted for SIGINT/SIGTERM/SIGHUP) with the partial output
/// removed; the message names the source, the entry or the output.
ImportResult import_image(const ImportOptions& opt, const ImportProgressFn& progress = {});

/// SOURCE_DATE_EPOCH from the environment: nullopt when unset; throws
/// Error when it is not a non-negative integer.
std::optional<int64_t> source_date_epoch_from_env();

}  // namespace trainimg::builder
