// SPDX-License-Identifier: GPL-3.0-or-later
#include "inspect/testing/daemon_image.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cstdio>

#include "common/error.h"
#include "inspect/engine/engine.h"
#include "inspect/sources/string_source.h"

namespace trainimg::inspect::testing {
namespace {

// A Docker repository path component: [a-z0-9]+ joined by '-'.
std::string repository_component(std::string_view tag) {
  std::string_view repo = tag.substr(0, tag.rfind(':'));
  std::string out;
  for (unsigned char c : repo) {
    if (std::isalnum(c))
      out += char(std::tolower(c));
    else if (!out.empty() && out.back() != '-')
      out += '-';
  }
  while (!out.empty() && out.back() == '-') out.pop_back();
  return out.empty() ? "image" : out;
}

}  // namespace

std::optional<std::string> docker_daemon_unavailable() {
  std::string socket;
  try {
    socket = engine::socket_path_from_env();
  } catch (const Error& e) {
    return std::string("no usable Docker daemon socket: ") + e.what();
  }
  struct stat st {};
  if (::stat(socket.c_str(), &st) != 0 || !S_ISSOCK(st.st_mode))
    return "no Docker daemon socket at " + socket +
           "; dockerd:// tests skipped (CI starts dockerd: .ci/start-services.sh)";
  return std::nullopt;
}

DaemonImage::DaemonImage(const ImageSpec& img) {
  static std::atomic<int> loads{0};
  tag_ = "trainimg-test/" + repository_component(img.tag) + "-" + std::to_string(::getpid()) + "-" +
         std::to_string(++loads) + ":latest";
  ImageSpec tagged = img;
  tagged.tag = tag_;
  TempDir t;
  // The layout every daemon version loads (`docker save` before Docker 25).
  write_docker_archive(tagged, t / "img.tar", ArchiveLayout::Legacy);
  const std::string body = read_bytes(t / "img.tar");
  StringSource in(body);
  auto e = engine::Engine::connect();
  auto loaded = e.load([&](char* buf, size_t n) { return in.read(buf, n); });
  if (std::find(loaded.begin(), loaded.end(), tag_) == loaded.end()) {
    std::string names;
    for (const auto& l : loaded) names += (names.empty() ? "" : ", ") + l;
    try {
      e.remove_image(tag_);
    } catch (const Error&) {
    }
    throw Error(e.endpoint(),
                "POST /images/load: expected '" + tag_ + "' to be loaded, the daemon loaded " + names);
  }
}

DaemonImage::~DaemonImage() {
  try {
    engine::Engine::connect().remove_image(tag_);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "warning: test image %s not removed: %s\n", tag_.c_str(), e.what());
  }
}

}  // namespace trainimg::inspect::testing
