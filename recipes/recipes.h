// SPDX-License-Identifier: GPL-3.0-or-later
// Public header of the recipes library. Two halves:
// - `trainimg lint` on Dockerfiles: the rules of domain.md §6 (domain
//   "dockerfile"), one file each under recipes/rules/, listed in
//   recipes/rules/rules.def; lint_inputs() lints paths (Dockerfiles and
//   recipes) under a policy (lint_inputs.cc).
// - Recipes: a declarative YAML description of a training image (NGC base +
//   EFA installer + build steps + user code), validated with positions and
//   rendered to the Dockerfile seed 002 prescribes (recipes/recipe/;
//   docs/recipes.md is the schema reference).
// The Dockerfile model is its own library (recipes/dockerfile/dockerfile.h).
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/diagnostic.h"
#include "common/report.h"
#include "common/source_file.h"
#include "recipes/dockerfile/dockerfile.h"

namespace trainimg::policy {
struct Policy;
}  // namespace trainimg::policy

namespace trainimg::recipes {

struct LintOptions {
  /// The host's EFA installer version (`--expect efa-installer=1.50.0`):
  /// efa-version-pin becomes an error when the Dockerfile installs another.
  std::optional<std::string> expect_efa_installer;
  /// Image prefixes declared built on NGC's PyTorch container (`--ngc-base`):
  /// they carry NGC's Open MPI in /usr/local/mpi, as nvcr.io/nvidia/pytorch does.
  std::vector<std::string> ngc_bases;
  /// Build contexts (`--context DIR`): where a custom frontend's `INCLUDE+
  /// FILE` is looked up after the Dockerfile's own directory.
  std::vector<std::string> contexts;
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

/// What linting one Dockerfile file gives: findings, and remarks (skipped
/// instructions, INCLUDE+ files that could not be read), each positioned in
/// the file it is about.
struct LintedFile {
  std::vector<Diagnostic> findings;
  std::vector<Diagnostic> notes;
};
/// Lints a Dockerfile with its `INCLUDE+ FILE` lines (edrevo/dockerfile-plus,
/// under a `# syntax=` directive) read in place from the Dockerfile's
/// directory or `opt.contexts`; one that cannot be read is a remark, and the
/// rest is linted without it. Throws trainimg::Error (positioned in the file
/// at fault) when the whole is not a well-formed Dockerfile.
LintedFile lint_dockerfile_file(const SourceFile& f, const LintOptions& opt);

/// Lints an already parsed Dockerfile (`f` is the text it was parsed from).
std::vector<Diagnostic> lint_dockerfile(const Dockerfile& df, const SourceFile& f, const LintOptions& opt);

/// Every Dockerfile rule (domain "dockerfile"), in catalogue order.
const std::vector<RuleInfo>& lint_rules();

/// `dockerfile-syntax`: an input refused as a Dockerfile (the parser's
/// positioned error), reported as an error finding where a structured
/// report (JSON, SARIF, JUnit) must carry it. Not a check of lint_rules().
const RuleInfo& dockerfile_syntax_rule();

/// Parses `--expect` values: "efa-installer=1.50.0" -> sets
/// expect_efa_installer. Throws trainimg::Error for an unknown key or a value
/// that is not a version.
void apply_expect(LintOptions& opt, const std::string& key_value);

// --------------------------------------- `trainimg lint FILE|DIR...` (lint_inputs.cc)

/// The config's `expect: efa-installer` and `ngc-bases`, then the flags
/// (which win). Throws Error for a bad expect value.
LintOptions lint_options(const policy::Policy& pol, const std::vector<std::string>& expect,
                         const std::vector<std::string>& ngc_bases, const std::vector<std::string>& contexts);

/// What lint read and found, before policy. Owns the sources `by_name`
/// points into (carets, baseline fingerprints).
struct LintRun {
  Report report;  ///< kind "lint": the inputs linted, their findings and notes
  std::vector<std::unique_ptr<SourceFile>> sources;
  std::map<std::string, const SourceFile*> by_name;
  std::vector<Diagnostic> refused;   ///< inputs that are not Dockerfiles trainimg can parse
  std::vector<Suppressed> excluded;  ///< inputs the config's exclude-paths names: not even read
};
/// Lints every argument ('-' = standard input; a directory is walked with
/// dockerfiles_under; *.yaml/*.yml named on the command line are recipes)
/// into `run`, skipping what `pol`'s exclude-paths names. A refused file
/// found by walking is kept in `run.refused`; one named on the command line
/// is too with `keep_refusals` (a structured report), else its Error is
/// thrown.
void lint_inputs(LintRun& run, const std::vector<std::string>& args, const LintOptions& opt,
                 const policy::Policy& pol, bool keep_refusals);
/// After the policy: the excluded inputs as suppressed findings, and each
/// refusal as an error finding of dockerfile-syntax (`as_findings`) or a note.
void add_refusals(Report& r, const LintRun& run, bool as_findings);

// ------------------------------------------------ recipes (recipes/recipe/)
/// A column range of a rendered line that one recipe node produced.
struct SourceSpan {
  int from = 0;      ///< first rendered column (1-based)
  int to = 0;        ///< one past the last rendered column
  std::string file;  ///< recipe path, or "--set KEY" for an override
  int line = 0;      ///< 1-based position of the node (0: none)
  int column = 0;
  /// The node's text was copied verbatim: rendered column from + i is
  /// recipe column column + i. Otherwise every column maps to the node.
  bool verbatim = false;
  int length = 0;  ///< columns of the node's text (caret range)
};

/// Where one rendered Dockerfile line came from in the recipe: the node
/// that produced the line as a whole, and finer spans inside it.
struct SourceMapEntry {
  std::string file;
  int line = 0;  ///< 0 for generated lines (header, blank lines)
  int column = 0;
  int length = 0;
  std::vector<SourceSpan> spans;
};

struct RenderResult {
  /// The Dockerfile; empty whenever `diagnostics` holds an error.
  std::string dockerfile;
  /// Validation errors, refusals and lint findings, all positioned in the
  /// recipe (or in "--set KEY" for overrides); sorted.
  std::vector<Diagnostic> diagnostics;
  /// source_map[i] describes rendered line i + 1.
  std::vector<SourceMapEntry> source_map;
};

/// Loads `path`, applies `set_overrides` ("dotted.key=YAML value", in
/// order), validates, renders, and lints the rendered Dockerfile with the
/// default options, mapping every finding back to the recipe. Throws
/// trainimg::Error when the file is unreadable or is not YAML, or an
/// override is not KEY=VALUE (stopping failures: exit 2).
RenderResult render_recipe_file(const std::string& path, const std::vector<std::string>& set_overrides);

/// As render_recipe_file, for recipe text already in memory (`name` is what
/// diagnostics and the header comment call it; copy sources are checked
/// relative to `context_dir`).
RenderResult render_recipe_text(const std::string& name, const std::string& text,
                                const std::vector<std::string>& set_overrides,
                                const std::string& context_dir);

/// What `trainimg lint RECIPE.yaml` reports: validation errors, refusals,
/// and the rendered Dockerfile's lint findings (with `opt`), positioned in
/// the recipe. Throws trainimg::Error as render_recipe_file does.
std::vector<Diagnostic> lint_recipe_file(const std::string& path, const LintOptions& opt);

/// Rules only recipes have (kind "recipe"): recipe-syntax, recipe-schema,
/// recipe-efa-flags. Everything else is found by the Dockerfile rules on
/// the rendered text, under their ids (domain.md §6).
const std::vector<RuleInfo>& recipe_rules();

}  // namespace trainimg::recipes
