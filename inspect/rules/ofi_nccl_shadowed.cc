// SPDX-License-Identifier: GPL-3.0-or-later
#include "common/version.h"
#include "inspect/rules/rule.h"

namespace trainimg::inspect::rules {

namespace {
const facts::LoaderCandidate* loaded_candidate(const facts::ImageFacts& f) {
  if (f.nccl_plugin) return &*f.nccl_plugin;
  const auto* l = f.loader_for("libnccl-net-ofi.so");
  return l ? l->selected() : nullptr;
}

void check(const RuleInfo& rule, const Context& c, std::vector<Diagnostic>& out) {
  const auto& f = c.facts;
  const auto* cand = loaded_candidate(f);
  const auto* loaded = loaded_plugin(f);
  if (!cand || !loaded || !loaded->aws_ofi_nccl) return;
  const facts::OfiPlugin* better = nullptr;
  std::string why;
  for (const auto& p : f.plugins) {
    if (!p.aws_ofi_nccl || p.path == loaded->path) continue;
    // Releases only: a source build says "1.16.3-aws", the installer's
    // package "1.16.3-1", the same plugin (same_release).
    if (!p.version.empty() && !loaded->version.empty() &&
        compare_versions(release_of(p.version), release_of(loaded->version)) > 0 &&
        (!better || compare_versions(release_of(p.version), release_of(better->version)) > 0)) {
      better = &p;
      why = "newer " + p.version + " at " + p.path;
    }
  }
  // The installer's copy wins over anything else the base left behind, unless
  // both versions are known and the loaded one is not older (a plugin built
  // from source after the installer, as awsome-distributed-training's
  // nccl-tests.Dockerfile does into /opt/aws-ofi-nccl: seed 002's worry is
  // "older-version libraries").
  if (!better && f.installer && f.installer->package(facts::is_ofi_nccl_package) &&
      !loaded->path.starts_with("/opt/amazon/ofi-nccl/"))
    for (const auto& p : f.plugins)
      if (p.aws_ofi_nccl && p.path.starts_with("/opt/amazon/ofi-nccl/") &&
          (p.version.empty() || loaded->version.empty())) {
        better = &p;
        why = "EFA installer's copy at " + p.path;
        break;
      }
  if (!better) return;
  out.push_back(
      Finding(rule, "NCCL would load " + cand->path + " (aws-ofi-nccl " +
                        (loaded->version.empty() ? std::string("of unknown version") : loaded->version) +
                        ", " + cand->how + ") instead of the " + why)
          .in(c.facts.reference)
          .path(loaded->path, loaded->layer));
}
}  // namespace

const ImageRule kOfiNcclShadowed{
    {"ofi-nccl-shadowed", Severity::Error,
     "the plugin NCCL would load for `NCCL_NET_PLUGIN` is older than another aws-ofi-nccl copy, or not the "
     "installer's copy when either version is unknown (e.g. the base's older plugin first in the path)",
     "ENV LD_LIBRARY_PATH=/opt/amazon/ofi-nccl/lib:/opt/amazon/efa/lib:${LD_LIBRARY_PATH} after the "
     "installer",
     "seed 002 \"Pitfall ③ — LD_LIBRARY_PATH\"", "image", "docs/inspect.md#rules"},
    check};

}  // namespace trainimg::inspect::rules
