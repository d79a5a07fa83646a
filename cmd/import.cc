// SPDX-License-Identifier: GPL-3.0-or-later
// trainimg import SOURCE -o OUT.sqsh: builder::import_image; progress on stderr, summary on stdout.
#include "builder/import/import.h"

#include <unistd.h>

#include <iostream>
#include <memory>
#include <string>

#include "builder/publish/publish.h"
#include "cmd/command.h"
#include "common/units.h"

namespace trainimg::cmd {

namespace {

// What needs a word of translation; everything else binds to the options.
struct ImportFlags {
  builder::ImportOptions o;
  std::string compression = "zstd", block_size = "1M", progress = "auto", via = "native";
  bool no_inspect = false, no_index = false;
};

int run_import(ImportFlags& f) {
  builder::ImportOptions& o = f.o;
  o.compressor = *sqsh::parse_compressor(f.compression);  // IsMember checked it
  auto bs = parse_byte_size(f.block_size);
  if (!bs || *bs < 4096 || *bs > (1u << 20) || (*bs & (*bs - 1)) != 0)
    throw Error("--block-size", "'" + f.block_size + "' is not a power of two between 4K and 1M");
  o.block_size = static_cast<uint32_t>(*bs);
  o.inspect = !f.no_inspect;
  o.via_enroot = f.via == "enroot";
  o.write_index = !f.no_index;
  o.source_date_epoch = builder::source_date_epoch_from_env();
  // Interrupted: cmd::run_guarded says so and exits 128+N.
  auto r = builder::import_image(
      o, builder::import_progress_printer(f.progress, std::cerr, ::isatty(STDERR_FILENO)));
  for (const std::string& n : r.notes) std::cerr << "trainimg: note: " << n << "\n";
  std::cout << builder::import_summary(r);
  return int(kExitOk);
}

}  // namespace

void setup_import(CLI::App& sub, Runner& run) {
  auto f = std::make_shared<ImportFlags>();
  sub.add_option(
         "source", f->o.source,
         "dockerd://IMAGE[:TAG], docker://[USER@][REGISTRY#]IMAGE[:TAG|@DIGEST], docker-archive:PATH[:REF], "
         "oci:DIR[:TAG], oci-archive:PATH[:TAG], dir:ROOTFS, or a path")
      ->required();
  sub.add_option("-o,--output", f->o.output, "The .sqsh to publish (atomically)")->required();
  sub.add_option("--compression", f->compression, "zstd (default), gzip, xz, lzo or none")
      ->check(CLI::IsMember({"zstd", "gzip", "xz", "lzo", "none"}));
  sub.add_option("--level", f->o.level, "Compression level (default: zstd 3, gzip 9, xz 6, lzo 8)");
  sub.add_option("--block-size", f->block_size, "Data block size, 4K..1M, power of two (default 1M)");
  sub.add_option("--jobs", f->o.jobs,
                 "At most N threads reading or compressing at once (default: no cap, threads for every CPU "
                 "this process may use: its affinity mask, capped by a cgroup CPU quota)");
  sub.add_flag("--force", f->o.force, "Replace an existing output atomically");
  sub.add_flag("--enroot-defaults", f->o.enroot_defaults,
               "enroot's exact layout: -comp lzo -noD, 128 KiB blocks");
  sub.add_flag("--keep-xattrs", f->o.keep_xattrs, "Keep extended attributes (enroot drops them)");
  sub.add_option("--via", f->via, "native (default) or enroot: run the real `enroot import`, then publish")
      ->check(CLI::IsMember({"native", "enroot"}));
  sub.add_option("--reuse", f->o.reuse,
                 "An earlier trainimg .sqsh to copy shared layers' blocks from (repeatable)");
  sub.add_flag("--no-index", f->no_index, "Do not write OUT.sqsh.index (what --reuse of this image needs)");
  sub.add_flag("--no-inspect", f->no_inspect, "Do not inspect the image for the sidecar's verdict");
  sub.add_option("--progress", f->progress, "auto, tty, json (lines on stderr) or none")
      ->check(CLI::IsMember({"auto", "tty", "json", "none"}));
  auto sf = std::make_shared<SourceFlags>();
  add_source_flags(sub, sf);
  run = [f, sf] {
    f->o.sources = source_options(*sf);
    return run_import(*f);
  };
}

}  // namespace trainimg::cmd
