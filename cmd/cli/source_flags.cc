// SPDX-License-Identifier: GPL-3.0-or-later
// The docker:// flags that inspect and import share.
#include "cmd/cli/cli.h"
#include "common/error.h"
#include "inspect/sources/source.h"

namespace trainimg::cmd {

void add_source_flags(CLI::App& sub, const std::shared_ptr<SourceFlags>& f) {
  sub.add_option("--platform", f->platform,
                 "docker://: OS/ARCH[/VARIANT] to pick from an index (default: the host's)");
  sub.add_option("--cache", f->cache,
                 "docker://: the blob cache directory (default: $TRAINIMG_CACHE, else "
                 "$XDG_CACHE_HOME/trainimg)");
  sub.add_flag("--no-cache", f->no_cache, "docker://: write nothing to the blob cache");
  sub.add_option("--max-connections", f->max_connections,
                 "docker://: blobs downloaded at once (default: $ENROOT_MAX_CONNECTIONS, else 10)");
}

inspect::SourceOptions source_options(const SourceFlags& f) {
  if (!f.platform.empty()) {
    auto slash = f.platform.find('/');
    if (slash == std::string::npos || slash == 0 || slash + 1 == f.platform.size())
      throw Error("--platform",
                  "'" + f.platform + "' is not OS/ARCH[/VARIANT] (e.g. linux/amd64, linux/arm64/v8)");
  }
  inspect::SourceOptions o;
  o.platform = f.platform;
  o.cache_dir = f.cache;
  o.no_cache = f.no_cache;
  o.max_connections = f.max_connections;
  return o;
}

}  // namespace trainimg::cmd
