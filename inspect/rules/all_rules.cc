// SPDX-License-Identifier: GPL-3.0-or-later
// The one explicit list of image rules (no static self-registration: the
// linker would drop unreferenced objects from the static library).
#include "common/version.h"
#include "inspect/rules/rule.h"

namespace trainimg::inspect {

namespace rules {

const std::vector<const ImageRule*>& all_rules() {
  static const std::vector<const ImageRule*> kRules = {
#define IMAGE_RULE(name) &name,
#include "inspect/rules/rules.def"
#undef IMAGE_RULE
  };
  return kRules;
}

const facts::OfiPlugin* loaded_plugin(const facts::ImageFacts& f) {
  if (f.nccl_plugin)
    if (const auto* p = f.plugin_at(f.nccl_plugin->resolved)) return p;
  if (const auto* l = f.loader_for("libnccl-net-ofi.so"); l && l->selected())
    return f.plugin_at(l->selected()->resolved);
  return nullptr;
}

const facts::Libfabric* loaded_libfabric(const facts::ImageFacts& f) {
  if (const auto* l = f.loader_for("libfabric.so.1"); l && l->selected())
    return f.libfabric_at(l->selected()->resolved);
  return nullptr;
}

bool has_efa_stack(const facts::ImageFacts& f) {
  if (f.installer) return true;
  for (const auto& l : f.libfabrics)
    if (l.efa_build) return true;
  for (const auto& p : f.plugins)
    if (p.aws_ofi_nccl) return true;
  return false;
}

}  // namespace rules

std::vector<RuleInfo> image_rules() {
  std::vector<RuleInfo> out;
  for (const auto* r : rules::all_rules()) out.push_back(r->info);
  return out;
}

std::vector<Diagnostic> check_image(const facts::ImageFacts& f, const ImageExpectations& e) {
  std::vector<Diagnostic> out;
  rules::Context c{f, e};
  for (const auto* r : rules::all_rules()) r->check(r->info, c, out);
  return out;
}

}  // namespace trainimg::inspect
