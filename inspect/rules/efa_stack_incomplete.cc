// SPDX-License-Identifier: GPL-3.0-or-later
#include "inspect/rules/rule.h"

namespace trainimg::inspect::rules {

namespace {
bool in_ofi_prefix(const std::string& p) {
  return p.starts_with("/opt/amazon/ofi-nccl/") || p.starts_with("/opt/amazon/aws-ofi-nccl/");
}

void missing(const RuleInfo& rule, const Context& c, const std::string& what,
             bool (*match)(const std::string&), const std::string& expected_path,
             std::vector<Diagnostic>& out) {
  for (const auto& r : c.facts.removed)
    if (match(r.path)) {
      auto d = Finding(rule, "the EFA installer manifest is present but " + what + " " + r.path + " (layer " +
                                 r.layer + ") was deleted by layer " + r.removed_by)
                   .in(c.facts.reference)
                   .path(r.path, r.removed_by);
      out.push_back(std::move(d));
      return;
    }
  out.push_back(Finding(rule, "the EFA installer manifest is present but " + what + " is missing (expected " +
                                  expected_path + ")")
                    .in(c.facts.reference)
                    .path(expected_path));
}
}  // namespace

namespace {
void check(const RuleInfo& rule, const Context& c, std::vector<Diagnostic>& out) {
  const auto& f = c.facts;
  if (!f.installer) return;
  bool fabric = false, plugin = false;
  for (const auto& l : f.libfabrics) fabric = fabric || l.efa_build;
  for (const auto& p : f.plugins) plugin = plugin || (p.aws_ofi_nccl && in_ofi_prefix(p.path));
  if (!fabric)
    missing(
        rule, c, "libfabric", [](const std::string& p) { return p.starts_with("/opt/amazon/efa/"); },
        "/opt/amazon/efa/lib/libfabric.so.1", out);
  // Only an installer that recorded a plugin package (-g on a GPU image) owes one.
  if (!plugin && f.installer->package(facts::is_ofi_nccl_package))
    missing(rule, c, "the aws-ofi-nccl plugin", in_ofi_prefix, "/opt/amazon/ofi-nccl/lib/libnccl-net-ofi.so",
            out);
}
}  // namespace

const ImageRule kEfaStackIncomplete{
    {"efa-stack-incomplete", Severity::Error,
     "the installer manifest is present but `/opt/amazon/efa/lib/libfabric.so*` is missing, or the "
     "aws-ofi-nccl plugin is missing while the manifest lists a plugin package (deleted by a later layer, "
     "which is named, or never installed)",
     "do not delete /opt/amazon/efa or /opt/amazon/ofi-nccl after the "
     "installer; rerun efa_installer.sh with -g",
     "seed 002 \"Recommended: add the EFA installer to the training image\"", "image",
     "docs/inspect.md#rules"},
    check};

}  // namespace trainimg::inspect::rules
