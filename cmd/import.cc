// SPDX-License-Identifier: GPL-3.0-or-later
// trainimg import SOURCE -o OUT.sqsh [...]: builder::import_image with its
// flags; progress on stderr, the published path and a summary on stdout.
#include <unistd.h>

#include <cstdio>
#include <iostream>
#include <memory>

#include "builder/import.h"
#include "builder/publish.h"
#include "cmd/command.h"
#include "common/report.h"

namespace trainimg::cmd {

namespace {

struct ImportFlags {
  std::string source, output, compression = "zstd", progress = "auto", via = "native";
  int level = -1;
  std::string block_size = "1M";
  unsigned jobs = 0;
  bool force = false, enroot_defaults = false, keep_xattrs = false, no_inspect = false;
};

// "1M", "128K", "131072" -> bytes; 0 when malformed.
uint32_t parse_size(const std::string& s) {
  if (s.empty()) return 0;
  uint64_t mult = 1;
  std::string digits = s;
  char last = static_cast<char>(std::toupper(static_cast<unsigned char>(s.back())));
  if (last == 'K' || last == 'M') {
    mult = last == 'K' ? 1024 : 1024 * 1024;
    digits.pop_back();
  }
  if (digits.empty() || digits.size() > 9 || digits.find_first_not_of("0123456789") != std::string::npos) return 0;
  return static_cast<uint32_t>(std::stoull(digits) * mult);
}

std::string human(uint64_t b) {
  char out[32];
  if (b >= (1ull << 30)) std::snprintf(out, sizeof out, "%.2f GiB", double(b) / double(1ull << 30));
  else if (b >= (1ull << 20)) std::snprintf(out, sizeof out, "%.1f MiB", double(b) / double(1ull << 20));
  else std::snprintf(out, sizeof out, "%llu bytes", static_cast<unsigned long long>(b));
  return out;
}

builder::ImportProgressFn progress_printer(const std::string& mode) {
  bool tty = mode == "tty" || (mode == "auto" && ::isatty(STDERR_FILENO));
  if (mode == "json") {
    return [](const builder::ImportProgress& p) {
      nlohmann::ordered_json j = {{"schema", "trainimg.import-progress/v1"}, {"phase", p.phase},
                                  {"files", p.files}, {"bytes", p.bytes}, {"total_files", p.total_files},
                                  {"total_bytes", p.total_bytes}};
      std::cerr << j.dump() << "\n";
    };
  }
  if (!tty) return {};
  return [](const builder::ImportProgress& p) {
    std::string line = "\r\033[K" + p.phase + ": " + std::to_string(p.files) + " files, " + human(p.bytes);
    if (p.total_files) line += " of " + std::to_string(p.total_files) + " files, " + human(p.total_bytes);
    if (p.phase == "done") line += "\n";
    std::cerr << line << std::flush;
  };
}

int run_import(const ImportFlags& f) {
  builder::ImportOptions o;
  o.source = f.source;
  o.output = f.output;
  auto comp = sqsh::parse_compressor(f.compression);
  if (!comp) throw Error("--compression", "unknown compressor '" + f.compression + "'", "use zstd, gzip, xz, lzo or none");
  o.compressor = *comp;
  if (f.level >= 0) o.level = f.level;
  o.block_size = parse_size(f.block_size);
  if (o.block_size < 4096 || o.block_size > (1u << 20) || (o.block_size & (o.block_size - 1)) != 0)
    throw Error("--block-size", "'" + f.block_size + "' is not a power of two between 4K and 1M");
  o.jobs = f.jobs;
  o.force = f.force;
  o.enroot_defaults = f.enroot_defaults;
  o.keep_xattrs = f.keep_xattrs;
  o.inspect = !f.no_inspect;
  o.via_enroot = f.via == "enroot";
  o.source_date_epoch = builder::source_date_epoch_from_env();
  try {
    auto r = builder::import_image(o, progress_printer(f.progress));
    std::cout << r.output << "\n"
              << "  " << human(r.image_bytes) << " (" << r.sidecar["compression"]["algorithm"].get<std::string>()
              << (r.info.data_compressed ? "" : ", data uncompressed") << ", " << r.info.block_size / 1024
              << " KiB blocks), " << r.files << " files, " << human(r.input_bytes) << " of file data, "
              << r.info.inode_count << " inodes, " << r.passes << (r.passes == 1 ? " pass" : " passes") << "\n"
              << "  sidecar: " << r.output << ".json\n";
    return int(kExitOk);
  } catch (const builder::Interrupted& e) {
    std::cerr << "\n" << render_diagnostic(e.diagnostic(), want_color(STDERR_FILENO));
    return 128 + e.signal_number();
  }
}

}  // namespace

void setup_import(CLI::App& sub, Runner& run) {
  auto f = std::make_shared<ImportFlags>();
  sub.add_option("source", f->source,
                 "dockerd://IMAGE[:TAG], docker-archive:PATH[:REF], oci:DIR[:TAG], dir:ROOTFS, or a path")
      ->required();
  sub.add_option("-o,--output", f->output, "The .sqsh to publish (atomically)")->required();
  sub.add_option("--compression", f->compression, "zstd (default), gzip, xz, lzo or none")
      ->check(CLI::IsMember({"zstd", "gzip", "xz", "lzo", "none"}));
  sub.add_option("--level", f->level, "Compression level (default: zstd 3, gzip 9, xz 6, lzo 8)");
  sub.add_option("--block-size", f->block_size, "Data block size, 4K..1M, power of two (default 1M)");
  sub.add_option("--jobs", f->jobs, "Compressor threads (default: all cores)");
  sub.add_flag("--force", f->force, "Replace an existing output atomically");
  sub.add_flag("--enroot-defaults", f->enroot_defaults, "enroot's exact layout: -comp lzo -noD, 128 KiB blocks");
  sub.add_flag("--keep-xattrs", f->keep_xattrs, "Keep extended attributes (enroot drops them)");
  sub.add_option("--via", f->via, "native (default) or enroot: run the real `enroot import`, then publish")
      ->check(CLI::IsMember({"native", "enroot"}));
  sub.add_flag("--no-inspect", f->no_inspect, "Do not inspect the image for the sidecar's verdict");
  sub.add_option("--progress", f->progress, "auto, tty, json (lines on stderr) or none")
      ->check(CLI::IsMember({"auto", "tty", "json", "none"}));
  run = [f] { return run_import(*f); };
}

}  // namespace trainimg::cmd
