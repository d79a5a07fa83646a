// SPDX-License-Identifier: GPL-3.0-or-later
// host-library-mount: mounting the host's libraries into the container and
// putting them in LD_LIBRARY_PATH mixes host and image EFA stacks. A
// directory counts as host-mounted when the Dockerfile declares it a VOLUME
// or it sits under a conventional mount root (/host*, /mnt, /media, /run/host).
#include "recipes/rules/rules.h"

namespace trainimg::recipes::rules {
namespace {

bool mount_root(const std::string& dir) {
  if (path_under(dir, "/mnt") || path_under(dir, "/media") || path_under(dir, "/run/host")) return true;
  if (dir.size() < 2 || dir[0] != '/') return false;
  std::string first =
      dir.substr(1, dir.find('/', 1) == std::string::npos ? std::string::npos : dir.find('/', 1) - 1);
  return first.rfind("host", 0) == 0;
}

void check(const Context& c) {
  std::vector<std::string> volumes;
  for (const Instruction* in : c.final_image)
    if (in->keyword == "VOLUME")
      for (const Word& w : in->args) volumes.push_back(w.text);
  for (const Instruction* in : c.final_image) {
    if (in->keyword != "ENV") continue;
    for (const KeyValue& kv : in->pairs) {
      if (kv.key != "LD_LIBRARY_PATH") continue;
      std::string hits;
      for (const auto& d : split_path_list(kv.value)) {
        bool vol = false;
        for (const auto& v : volumes) vol = vol || path_under(d, v);
        if (vol || mount_root(d)) hits += (hits.empty() ? "" : ", ") + d;
      }
      if (!hits.empty())
        c.add(Finding(host_library_mount().info,
                      "LD_LIBRARY_PATH points at host-mounted library directories (" + hits + ")")
                  .at(c.src, kv.value_span));
    }
  }
}

}  // namespace

const Rule& host_library_mount() {
  static const Rule r{
      {"host-library-mount", Severity::Warning,
       "`ENV LD_LIBRARY_PATH` lists a directory under a `VOLUME` of the image or under a mount root "
       "(`/host*`, `/mnt`, `/media`, `/run/host`)",
       "install the host's EFA installer version in the image instead of mounting host libraries",
       "seed 002, The EFA stack already included in the NGC image (host library mounts not "
       "recommended)",
       "dockerfile", "docs/lint.md#rules"},
      check};
  return r;
}

}  // namespace trainimg::recipes::rules
