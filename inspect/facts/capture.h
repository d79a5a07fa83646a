// SPDX-License-Identifier: GPL-3.0-or-later
// Which files of an image inspect reads, and what it keeps of each: the
// want/capture pair handed to build_tree(). Everything else is skipped.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "inspect/sources/source.h"

namespace trainimg::inspect::facts {

enum class FileKind {
  None,
  Manifest,     ///< /opt/amazon/efa_installed_packages
  DpkgStatus,   ///< /var/lib/dpkg/status
  PkgConfig,    ///< libfabric.pc, ompi.pc, nccl.pc
  Header,       ///< rdma/fabric.h, mpi.h, nccl.h
  CudaJson,     ///< /usr/local/cuda*/version.json
  LdConf,       ///< /etc/ld.so.conf, /etc/ld.so.conf.d/*
  Environment,  ///< /etc/environment
  ElfLibrary,   ///< libfabric, NCCL, net plugins, libmpi
  ElfProgram,   ///< executables and mpi4py modules that may need libmpi
};

/// Decides from the entry alone (path, mode, size).
FileKind classify(const Entry& e);

/// Reads what the kind needs: {"kind": …, …}. Text files are read up to a
/// bound (larger ones are cut, and say so); ELF files through elf::read_elf.
nlohmann::json capture_file(const Entry& e, ContentReader& r);

/// The "NET/OFI Initializing aws-ofi-nccl " and "NCCL version " markers.
extern const char* const kOfiMarker;
extern const char* const kNcclMarker;

}  // namespace trainimg::inspect::facts
