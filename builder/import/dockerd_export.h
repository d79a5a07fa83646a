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

#include <sched.h>

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "inspect/sources/source.h"

namespace trainimg::builder {

/// `image` is what follows "dockerd://". Reads the config now (throws Error
/// for an unknown image or an unreachable daemon). walk() offers one layer,
/// id "export"; each call creates, exports and removes its own container.
/// `created` is set to the image's creation time (image_created() of the
/// `Created` field GET /images/{name}/json reports, i.e. the config's
/// `created`).
std::unique_ptr<inspect::ImageSource> open_dockerd_export(const std::string& image, int64_t& created);

/// The daemon's export is the critical path of `import dockerd://` when the
/// image compresses fast (the walk keeps up with it): the daemon reads the
/// container's files one by one, through a chain of its own processes and
/// threads, and must not wait for a core while the compressors hold every
/// one. When the image compresses slowly, the compressors are the critical
/// path instead and need every core. The export's read-ahead tells which:
/// while a DaemonYield lives, pace() narrows every thread of the process to
/// all its CPUs but the first (leaving the daemon one; nothing with a single
/// CPU) when the read-ahead is at most a quarter full, and widens them again
/// when it is three quarters full (the daemon waits for us) or the stream
/// ended. The thread that makes it and the threads it starts run at nice
/// +kDaemonYieldNice (at most 19; an unprivileged thread cannot take it back,
/// so it stays). The destructor widens every thread.
/// 2-core bench host, medians of alternating runs (`docker export` / nice +5
/// alone / one core left for the whole import): the bench image (half random,
/// half repeated text) 3.48 / 4.65 / 3.98 s; a 1.77 GB image of /usr's
/// binaries 4.17 / 7.41 / 9.43 s. Paced, each gets the better one.
inline constexpr int kDaemonYieldNice = 5;
class DaemonYield {
 public:
  DaemonYield();
  ~DaemonYield();
  DaemonYield(const DaemonYield&) = delete;
  DaemonYield& operator=(const DaemonYield&) = delete;

  /// From the export's reader: `buffered` of `capacity` bytes read ahead.
  /// Does nothing when no DaemonYield lives.
  static void pace(size_t buffered, size_t capacity);
  /// From the export's reader: the stream ended (what is left is ours).
  static void stream_ended();
  /// Whether the process's threads are narrowed now (tests).
  bool narrowed() const;

 private:
  void apply(bool narrow);
  cpu_set_t full_{}, narrow_{};  // the creating thread's CPUs, and those without the first
  bool can_narrow_ = false;      // two CPUs or more
  bool narrowed_ = false;
  mutable std::mutex mu_;
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
