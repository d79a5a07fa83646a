// SPDX-License-Identifier: GPL-3.0-or-later
// `dockerd://IMAGE` for import: the daemon's flattened export of a created
// (never started) container, exactly what `enroot import dockerd://` reads
// (`docker create` + `docker export`), through the Engine API:
//   GET  /images/{name}/json           config, digests
//   POST /containers/create            {"Image": …, "Labels": {trainimg.import: TOKEN}}
//   GET  /containers/{id}/export       one tar: whiteouts applied by the daemon
//   POST /containers/prune?filters={"label":["trainimg.import=TOKEN"]}
// Why the export and not /images/{name}/get (inspect's dockerd source): it is
// one already-merged stream read once, with Docker's init layer in it as
// enroot sees it, and no layer is kept or read twice. The container is removed
// through a prune filtered on its own unique label: the Engine client speaks
// GET and POST only, and the filter can match nothing else.
//
// The export is the image plus what `docker create` wrote: Docker's init
// layer (/.dockerenv, /dev/*, /etc/hosts, /etc/hostname, /etc/resolv.conf,
// /etc/mtab, and so the /etc and /dev directories; /proc and /sys when the
// image lacks them) and a missing WORKDIR with the directory above it, all
// stamped with the clock. The import therefore takes its reference time from
// the image (`created`, see image_created()), not from the export's mtimes.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "inspect/inspect.h"

namespace trainimg::builder {

/// `image` is what follows "dockerd://". Reads the config now (throws Error
/// for an unknown image or an unreachable daemon). walk() offers one layer,
/// id "export"; each call creates, exports and removes its own container.
/// `created` is set to the image's creation time (image_created() of the
/// `Created` field GET /images/{name}/json reports, i.e. the config's
/// `created`).
std::unique_ptr<inspect::ImageSource> open_dockerd_export(const std::string& image, int64_t& created);

/// The daemon's export is the critical path of `import dockerd://` (the walk
/// keeps up with it; a read-ahead never fills): the daemon reads the
/// container's files one by one, through a chain of its own processes and
/// threads, and must not wait for a core while the compressors hold every
/// one. While a DaemonYield lives, the thread that made it and the threads it
/// starts (the compressors, the read-ahead) leave the daemon one core of
/// those they may run on (none is left with a single core), and they run at
/// nice +kDaemonYieldNice (at most 19); the daemon keeps its own. The
/// destructor gives the calling thread its CPUs back; the nice value stays
/// (an unprivileged thread cannot lower it again), and threads started under
/// the guard keep what they inherited, so the guard must outlive them.
/// On the 2-core bench host, medians of 7 alternating runs: nice +5 alone
/// 4.65 s, with one core left to the daemon 3.98 s (`docker export` 3.48 s).
inline constexpr int kDaemonYieldNice = 5;
class DaemonYield {
 public:
  DaemonYield();
  ~DaemonYield();
  DaemonYield(const DaemonYield&) = delete;
  DaemonYield& operator=(const DaemonYield&) = delete;
  /// How many CPUs the calling thread gave up (0 or 1).
  int cpus_left_to_daemon() const { return left_; }

 private:
  std::vector<unsigned char> saved_;  // the calling thread's cpu_set_t, to restore
  int left_ = 0;
};

/// An RFC 3339 time as Docker writes it ("2026-12-03T07:37:42.724169957Z",
/// or with a "+HH:MM"/"-HH:MM" offset) in whole seconds since 1970, the
/// fraction dropped. nullopt for anything else.
std::optional<int64_t> parse_rfc3339(const std::string& s);

/// The image's creation time in seconds, for the import's reference time: the
/// parsed `created`, or 0 when it is absent, unparsable or before 1970
/// (Docker reports an image without `created` as 0001-01-01T00:00:00Z).
int64_t image_created(const std::string& created);

}  // namespace trainimg::builder
