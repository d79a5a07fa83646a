// SPDX-License-Identifier: GPL-3.0-or-later
// A test image loaded into the real Docker daemon, for the `dockerd://`
// source kind: written as a docker archive (image_builder.h), sent through
// POST /images/load under a tag of its own, and removed again (DELETE
// /images/{tag}?force=1) when the DaemonImage goes out of scope, so a failing
// test leaves no image behind. Tests only.
#pragma once

#include <optional>
#include <string>

#include "inspect/testing/image_builder.h"

namespace trainimg::inspect::testing {

/// Why no image can be loaded into a Docker daemon here (DOCKER_HOST is not a
/// unix socket, or there is no socket at its path or /var/run/docker.sock),
/// or nullopt when the socket is there.
std::optional<std::string> docker_daemon_unavailable();

class DaemonImage {
 public:
  /// Loads `img` as "trainimg-test/NAME-PID-N:latest", NAME being img.tag's
  /// repository made a valid name and N counting loads in this process, so
  /// tests running at the same time never share a tag. Throws Error when the
  /// daemon refuses the archive or does not report that tag as loaded.
  explicit DaemonImage(const ImageSpec& img);
  /// Removes the tag (and the image when no other tag holds it); a failure
  /// is printed, not thrown.
  ~DaemonImage();
  DaemonImage(const DaemonImage&) = delete;
  DaemonImage& operator=(const DaemonImage&) = delete;
  /// "trainimg-test/…:latest", for `dockerd://` + tag().
  const std::string& tag() const { return tag_; }

 private:
  std::string tag_;
};

}  // namespace trainimg::inspect::testing
