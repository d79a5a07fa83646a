// SPDX-License-Identifier: GPL-3.0-or-later
// `trainimg lint` on Dockerfiles: the rules of domain.md §6 (domain
// "dockerfile"), one file each under recipes/rules/, listed in
// recipes/rules/all_rules.cc.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "common/diagnostic.h"
#include "common/source_file.h"
#include "recipes/dockerfile.h"

namespace trainimg::recipes {

struct LintOptions {
  /// The host's EFA installer version (`--expect efa-installer=1.50.0`):
  /// efa-version-pin becomes an error when the Dockerfile installs another.
  std::optional<std::string> expect_efa_installer;
  /// Image prefixes declared built on NGC's PyTorch container (`--ngc-base`):
  /// they carry NGC's Open MPI in /usr/local/mpi, as nvcr.io/nvidia/pytorch does.
  std::vector<std::string> ngc_bases;
};

/// What NGC's image family puts in the final image (for mpi-second-install):
/// the PyTorch container and the framework images built on it carry Open MPI
/// in /usr/local/mpi; nvcr.io/nvidia/cuda has none; other NGC images (HPC
/// SDK, hpc-benchmarks, …) carry HPC-X under /opt/hpcx.
enum class NgcMpi { None, UsrLocalMpi, Hpcx };
struct NgcBase {
  bool ngc = false;  ///< an NGC image (nvcr.io/nvidia/…, nvcr.io/ea-bignlp/…) or a --ngc-base prefix
  NgcMpi mpi = NgcMpi::None;
  std::string mpi_prefix() const {
    return mpi == NgcMpi::UsrLocalMpi ? "/usr/local/mpi" : mpi == NgcMpi::Hpcx ? "/opt/hpcx/ompi" : "";
  }
};
NgcBase classify_base(const std::string& image, const LintOptions& opt);

/// Whether a file name is a Dockerfile's: `Dockerfile`, `Dockerfile.*`,
/// `Dockerfile-*`, `Dockerfile_*`, `*.Dockerfile`, `*.dockerfile`,
/// `Containerfile`, `Containerfile.*`; not `*.dockerignore` (BuildKit's
/// per-Dockerfile ignore file), `*.md`, `*.rst`, `*.txt`.
bool is_dockerfile_name(const std::string& name);
/// The files under `dir` (recursively, hidden directories and symbolic links
/// to directories skipped) whose names are Dockerfiles', sorted.
std::vector<std::string> dockerfiles_under(const std::string& dir);

/// Lints Dockerfile text. Returns the findings (positions in `f`), sorted,
/// with `# trainimg: ignore=ID` pragmas applied. Throws trainimg::Error
/// (positioned) when `f` is not a well-formed Dockerfile.
std::vector<Diagnostic> lint_dockerfile(const SourceFile& f, const LintOptions& opt);

/// Lints an already parsed Dockerfile (`f` is the text it was parsed from).
std::vector<Diagnostic> lint_dockerfile(const Dockerfile& df, const SourceFile& f, const LintOptions& opt);

/// Every Dockerfile rule (domain "dockerfile"), in catalogue order.
const std::vector<RuleInfo>& lint_rules();

/// Parses `--expect` values: "efa-installer=1.50.0" -> sets
/// expect_efa_installer. Throws trainimg::Error for an unknown key or a value
/// that is not a version.
void apply_expect(LintOptions& opt, const std::string& key_value);

}  // namespace trainimg::recipes
