// SPDX-License-Identifier: GPL-3.0-or-later
// Parsers for the small text files an image keeps its versions in (domain.md
// §2): the EFA installer manifest, dpkg status, pkg-config files, C headers'
// version macros, CUDA's version.json, ld.so.conf and /etc/environment. Each
// takes the file's text and returns plain data; none throws on odd content
// (a file that says nothing useful yields empty results).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace trainimg::inspect::facts {

struct Package {
  std::string name, version, arch;
  bool operator==(const Package&) const = default;
};

struct EfaManifest {
  std::string installer_version;  ///< from "# EFA installer version: X"; empty when absent
  std::vector<Package> packages;  ///< in file order
};

/// `/opt/amazon/efa_installed_packages`: '#' comment lines (the first names
/// the installer version), then packages as `name_version_arch` (deb) or
/// `name-version[-release][.arch]` (rpm), space or line separated.
EfaManifest parse_efa_manifest(std::string_view text);

/// One package word in either form; nullopt when it has no version part.
std::optional<Package> parse_package_word(std::string_view word);

/// `/var/lib/dpkg/status`: name -> version of every package whose Status is
/// "install ok installed" and whose name `keep` accepts (all when null).
std::map<std::string, std::string> parse_dpkg_status(std::string_view text, bool (*keep)(std::string_view) = nullptr);

/// A pkg-config file's `Version:` field (variables expanded), or empty.
std::string parse_pc_version(std::string_view text);

/// Integer `#define NAME VALUE` macros of a header, for the names asked.
std::map<std::string, long> parse_int_defines(std::string_view text, const std::vector<std::string>& names);

/// Version from `include/rdma/fabric.h` (FI_MAJOR_VERSION.FI_MINOR_VERSION
/// [.FI_REVISION_VERSION]), `include/mpi.h` (OMPI_MAJOR/MINOR/RELEASE_VERSION)
/// or `nccl.h` (NCCL_MAJOR/MINOR/PATCH); empty when the macros are missing.
std::string fabric_h_version(std::string_view text);
std::string mpi_h_version(std::string_view text);
std::string nccl_h_version(std::string_view text);

/// CUDA's `version.json`: the "cuda" component's "version"; empty otherwise.
std::string parse_cuda_version_json(std::string_view text);

/// One line of an ld.so.conf file: a directory or an `include` glob.
struct LdConfItem {
  bool include = false;
  std::string value;
  bool operator==(const LdConfItem&) const = default;
};
/// ld.so.conf syntax: comments (#), blank lines, `include GLOB...`, and
/// directories separated by whitespace, ':' or ','. `hwcap` lines ignored.
std::vector<LdConfItem> parse_ld_so_conf(std::string_view text);

/// `/etc/environment` as enroot writes it (the config Env, one KEY=VALUE a
/// line); also tolerates `export `, comments and quoted values.
std::vector<std::string> parse_environment_file(std::string_view text);

/// Splits "A:B::C" on ':' keeping order; empty entries dropped.
std::vector<std::string> split_colon(std::string_view s);

}  // namespace trainimg::inspect::facts
