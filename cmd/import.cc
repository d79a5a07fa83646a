// SPDX-License-Identifier: GPL-3.0-or-later
// trainimg import SOURCE -o OUT.sqsh [...]: builder::import_image with its
// flags; progress on stderr, the published path and a summary on stdout.
#include "builder/import.h"

#include <unistd.h>

#include <cstdio>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

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
  bool force = false, enroot_defaults = false, keep_xattrs = false, no_inspect = false, no_index = false;
  std::vector<std::string> reuse;
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
  if (digits.empty() || digits.size() > 9 || digits.find_first_not_of("0123456789") != std::string::npos)
    return 0;
  return static_cast<uint32_t>(std::stoull(digits) * mult);
}

int run_import(const ImportFlags& f) {
  builder::ImportOptions o;
  o.source = f.source;
  o.output = f.output;
  auto comp = sqsh::parse_compressor(f.compression);
  if (!comp)
    throw Error("--compression", "unknown compressor '" + f.compression + "'",
                "use zstd, gzip, xz, lzo or none");
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
  o.reuse = f.reuse;
  o.write_index = !f.no_index;
  o.source_date_epoch = builder::source_date_epoch_from_env();
  try {
    auto r = builder::import_image(
        o, builder::import_progress_printer(f.progress, std::cerr, ::isatty(STDERR_FILENO)));
    for (const std::string& n : r.notes) std::cerr << "trainimg: note: " << n << "\n";
    std::cout << builder::import_summary(r);
    return int(kExitOk);
  } catch (const builder::Interrupted& e) {
    std::cerr << "\n" << render_diagnostic(e.diagnostic(), want_color(STDERR_FILENO));
    return 128 + e.signal_number();
  }
}

}  // namespace

void setup_import(CLI::App& sub, Runner& run) {
  auto f = std::make_shared<ImportFlags>();
  sub.add_option(
         "source", f->source,
         "dockerd://IMAGE[:TAG], docker://[USER@][REGISTRY#]IMAGE[:TAG|@DIGEST], docker-archive:PATH[:REF], "
         "oci:DIR[:TAG], oci-archive:PATH[:TAG], dir:ROOTFS, or a path")
      ->required();
  sub.add_option("-o,--output", f->output, "The .sqsh to publish (atomically)")->required();
  sub.add_option("--compression", f->compression, "zstd (default), gzip, xz, lzo or none")
      ->check(CLI::IsMember({"zstd", "gzip", "xz", "lzo", "none"}));
  sub.add_option("--level", f->level, "Compression level (default: zstd 3, gzip 9, xz 6, lzo 8)");
  sub.add_option("--block-size", f->block_size, "Data block size, 4K..1M, power of two (default 1M)");
  sub.add_option("--jobs", f->jobs, "Compressor threads (default: all cores)");
  sub.add_flag("--force", f->force, "Replace an existing output atomically");
  sub.add_flag("--enroot-defaults", f->enroot_defaults,
               "enroot's exact layout: -comp lzo -noD, 128 KiB blocks");
  sub.add_flag("--keep-xattrs", f->keep_xattrs, "Keep extended attributes (enroot drops them)");
  sub.add_option("--via", f->via, "native (default) or enroot: run the real `enroot import`, then publish")
      ->check(CLI::IsMember({"native", "enroot"}));
  sub.add_option("--reuse", f->reuse,
                 "An earlier trainimg .sqsh whose blocks the files of shared lowest layers are copied from "
                 "(repeatable; the one sharing most layers serves)");
  sub.add_flag("--no-index", f->no_index, "Do not write OUT.sqsh.index (what --reuse of this image needs)");
  sub.add_flag("--no-inspect", f->no_inspect, "Do not inspect the image for the sidecar's verdict");
  sub.add_option("--progress", f->progress, "auto, tty, json (lines on stderr) or none")
      ->check(CLI::IsMember({"auto", "tty", "json", "none"}));
  auto sf = std::make_shared<SourceFlags>();
  add_source_flags(sub, sf);
  run = [f, sf] {
    apply_source_flags(*sf);
    return run_import(*f);
  };
}

}  // namespace trainimg::cmd
