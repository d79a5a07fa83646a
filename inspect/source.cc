// SPDX-License-Identifier: GPL-3.0-or-later
// open_source(): one scheme table, then probing for bare paths (local kinds
// first, as syft's providers are tried: specific before generic).
#include "inspect/sources/source.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <string_view>

#include "common/error.h"
#include "common/fd.h"
#include "inspect/sources/dir_source.h"
#include "inspect/sources/docker_archive_source.h"
#include "inspect/sources/dockerd_source.h"
#include "inspect/sources/oci_layout_source.h"
#include "inspect/sources/registry_source.h"
#include "inspect/sources/sqsh_source.h"

namespace trainimg::inspect {
namespace {

using Opener = std::unique_ptr<ImageSource> (*)(const std::string& rest, const SourceOptions& opt);

struct Scheme {
  std::string_view prefix;
  Opener open;
};

// Only the registry reads the options.
template <std::unique_ptr<ImageSource> (*Open)(const std::string&)>
std::unique_ptr<ImageSource> local(const std::string& rest, const SourceOptions&) {
  return Open(rest);
}

const Scheme kSchemes[] = {
    {"dockerd://", local<open_dockerd_source>},
    {"docker://", open_registry_source},
    {"docker-archive:", local<open_docker_archive_source>},
    {"oci:", local<open_oci_layout_source>},
    {"oci-archive:", local<open_oci_archive_source>},
    {"sqsh:", local<open_sqsh_source>},
    {"dir:", local<open_dir_source>},
};

// The kind a bare path looks like, from its type and first bytes.
std::unique_ptr<ImageSource> probe(const std::string& path) {
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) throw_errno(path, "cannot open image");
  if (S_ISDIR(st.st_mode)) {
    if (access((path + "/oci-layout").c_str(), F_OK) == 0) return open_oci_layout_source(path);
    return open_dir_source(path);
  }
  UniqueFd fd(open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK));
  if (!fd) throw_errno(path, "cannot open image");
  std::array<unsigned char, 512> head{};
  ssize_t n = pread(fd.get(), head.data(), head.size(), 0);
  if (n < 0) throw_errno(path, "read");
  auto starts = [&](std::string_view magic, size_t at = 0) {
    return static_cast<size_t>(n) >= at + magic.size() &&
           std::string_view(reinterpret_cast<const char*>(head.data()) + at, magic.size()) == magic;
  };
  if (starts("hsqs")) return open_sqsh_source(path);
  if (starts("\x1f\x8b") || starts("\x28\xb5\x2f\xfd")) return open_docker_archive_source(path);
  if (n == 512 && (starts("ustar", 257))) return open_docker_archive_source(path);
  throw Error(path, "cannot tell what kind of image this is (not a squashfs, tar or directory)",
              "name the kind: docker-archive:PATH, oci:DIR[:TAG], oci-archive:PATH[:TAG], "
              "dockerd://IMAGE[:TAG], sqsh:PATH "
              "or dir:ROOTFS");
}

}  // namespace

std::unique_ptr<ImageSource> open_source(const std::string& uri, const SourceOptions& opt) {
  for (const auto& s : kSchemes)
    if (uri.starts_with(s.prefix)) {
      std::string rest = uri.substr(s.prefix.size());
      if (rest.empty()) throw Error(uri, "image source '" + std::string(s.prefix) + "' names nothing");
      return s.open(rest, opt);
    }
  return probe(uri);
}

}  // namespace trainimg::inspect
