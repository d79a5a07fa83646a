// SPDX-License-Identifier: GPL-3.0-or-later
#include "inspect/facts/capture.h"

#include <algorithm>
#include <cctype>
#include <string_view>

#include "inspect/elf/elf_reader.h"
#include "inspect/facts/text_parsers.h"

namespace trainimg::inspect::facts {

// aws-ofi-nccl logs "NET/OFI Initializing " PACKAGE_STRING, and its
// PACKAGE_STRING is "aws-ofi-nccl X.Y.Z" (seen in `strings` of release builds).
const char* const kOfiMarker = "NET/OFI Initializing aws-ofi-nccl ";
// NCCL's VERSION_STRING: "NCCL version " MAJOR.MINOR.PATCH SUFFIX "+cuda" …
// (NVIDIA/nccl v2.30.7-1 src/init.cc).
const char* const kNcclMarker = "NCCL version ";

namespace {

constexpr uint64_t kMaxText = 1u << 20;
// dpkg status of a full NGC image is a few MB.
constexpr uint64_t kMaxDpkgStatus = 64u << 20;
// Executables larger than this are not programs that matter here (and
// would only cost time): MPI applications and launchers are small.
constexpr uint64_t kMaxProgram = 256u << 20;

// A view into the entry's path: classify() runs for every regular file.
std::string_view base_of(std::string_view p) { return p.substr(p.rfind('/') + 1); }

bool under(const std::string& p, std::string_view dir) { return p.size() > dir.size() && p.starts_with(dir) && p[dir.size()] == '/'; }

bool ends_with(const std::string& p, std::string_view s) { return p.size() >= s.size() && p.ends_with(s); }

// A file name with a full release after ".so.": libnccl.so.2.30.7.
bool has_so_release(std::string_view base) {
  auto so = base.find(".so.");
  if (so == std::string::npos) return false;
  int dots = 0;
  for (char c : base.substr(so + 4)) {
    if (c == '.') ++dots;
    else if (!std::isdigit(static_cast<unsigned char>(c))) return false;
  }
  return dots >= 2;
}

bool is_library_name(std::string_view base) {
  return base.starts_with("libfabric.so") || base.starts_with("libnccl-net") || base.starts_with("libnccl.so") ||
         base.starts_with("libmpi.so");
}

std::string read_text(ContentReader& r, uint64_t max, bool& cut) {
  std::string out;
  char buf[64 * 1024];
  while (out.size() < max) {
    size_t k = r.read(buf, static_cast<size_t>(std::min<uint64_t>(sizeof buf, max - out.size())));
    if (k == 0) return out;
    out.append(buf, k);
  }
  char probe;
  cut = r.read(&probe, 1) > 0;
  return out;
}

bool keep_dpkg(std::string_view n) {
  return n.find("fabric") != std::string_view::npos || n.find("nccl") != std::string_view::npos ||
         n.find("openmpi") != std::string_view::npos || n.starts_with("cuda-compat") ||
         n.starts_with("cuda-cudart") || n.starts_with("efa");
}

}  // namespace

FileKind classify(const Entry& e) {
  const std::string& p = e.path;
  const std::string_view base = base_of(p);
  if (p == "/opt/amazon/efa_installed_packages") return FileKind::Manifest;
  if (p == "/var/lib/dpkg/status") return FileKind::DpkgStatus;
  if (p == "/etc/environment") return FileKind::Environment;
  if (p == "/etc/ld.so.conf" || under(p, "/etc/ld.so.conf.d")) return FileKind::LdConf;
  if (ends_with(p, "/pkgconfig/libfabric.pc") || ends_with(p, "/pkgconfig/ompi.pc") ||
      ends_with(p, "/pkgconfig/nccl.pc"))
    return FileKind::PkgConfig;
  if (ends_with(p, "/include/rdma/fabric.h") || ends_with(p, "/include/mpi.h") || ends_with(p, "/include/nccl.h"))
    return FileKind::Header;
  if (p.starts_with("/usr/local/cuda") && base == "version.json" &&
      std::count(p.begin(), p.end(), '/') == 4)
    return FileKind::CudaJson;
  if (is_library_name(base)) return FileKind::ElfLibrary;
  bool in_bin = p.find("/bin/") != std::string::npos && (p.starts_with("/opt/") || p.starts_with("/usr/local/"));
  if (in_bin && (e.mode & 0111) && e.size <= kMaxProgram) return FileKind::ElfProgram;
  if (p.find("/mpi4py/") != std::string::npos && ends_with(p, ".so")) return FileKind::ElfProgram;
  return FileKind::None;
}

nlohmann::json capture_file(const Entry& e, ContentReader& r) {
  FileKind k = classify(e);
  nlohmann::json j;
  bool cut = false;
  switch (k) {
    case FileKind::None: return nullptr;
    case FileKind::Manifest:
    case FileKind::PkgConfig:
    case FileKind::Header:
    case FileKind::CudaJson:
    case FileKind::LdConf:
    case FileKind::Environment:
      j["kind"] = static_cast<int>(k);
      j["text"] = read_text(r, kMaxText, cut);
      break;
    case FileKind::DpkgStatus: {
      j["kind"] = static_cast<int>(k);
      std::string text = read_text(r, kMaxDpkgStatus, cut);
      j["packages"] = parse_dpkg_status(text, keep_dpkg);
      break;
    }
    case FileKind::ElfLibrary:
    case FileKind::ElfProgram: {
      elf::ElfOptions opt;
      const std::string_view base = base_of(e.path);
      if (base.starts_with("libnccl-net")) opt.markers = {kOfiMarker};
      // The file name already gives NCCL's release; scan only when it does not.
      if (base.starts_with("libnccl.so") && !has_so_release(base)) opt.markers = {kNcclMarker};
      opt.keep_symbol = [](std::string_view s) {
        return s.starts_with("nccl") && s.find("Plugin_v") != std::string_view::npos;
      };
      elf::ElfInfo info = elf::read_elf(r, opt);
      if (!info.is_elf && info.error.empty()) {
        // A script in a bin/ directory is no finding; a library name that
        // is not an ELF object is one (the loader would refuse it).
        if (k == FileKind::ElfProgram) return nullptr;
        info.error = "not an ELF file";
      }
      j = {{"kind", static_cast<int>(k)}, {"soname", info.soname},   {"needed", info.needed},
           {"runpath", info.runpath},     {"rpath", info.rpath},     {"exports", info.exports},
           {"markers", info.markers},     {"error", info.error}};
      break;
    }
  }
  if (cut) j["cut"] = true;
  return j;
}

}  // namespace trainimg::inspect::facts
