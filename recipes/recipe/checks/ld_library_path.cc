// SPDX-License-Identifier: GPL-3.0-or-later
// efa-ld-library-path: after the installer, LD_LIBRARY_PATH must start with
// the installer's aws-ofi-nccl and libfabric, and keep the base's paths
// (seed 002, Pitfall ③). The renderer writes the right ENV; a step that
// sets LD_LIBRARY_PATH again must keep that prefix.
#include "recipes/recipe/checks/checks.h"
#include "recipes/recipe/load.h"
#include "recipes/rules/rules.h"

namespace trainimg::recipes {

namespace {
constexpr std::string_view kPrefix = "/opt/amazon/ofi-nccl/lib:/opt/amazon/efa/lib";

bool keeps_inherited(const std::string& v) {
  size_t start = 0;
  while (start <= v.size()) {
    size_t e = v.find(':', start);
    std::string part = v.substr(start, e == std::string::npos ? std::string::npos : e - start);
    if (part == "${LD_LIBRARY_PATH}" || part == "$LD_LIBRARY_PATH") return true;
    if (e == std::string::npos) break;
    start = e + 1;
  }
  return false;
}
}  // namespace

void check_ld_library_path(const Recipe& r, Findings& out) {
  for_each_env(r, [&](const Step& s, const NamedValue& e) {
    if (e.key.value != "LD_LIBRARY_PATH") return;
    const std::string& v = e.value.value;
    bool starts = v.compare(0, kPrefix.size(), kPrefix) == 0 &&
                  (v.size() == kPrefix.size() || v[kPrefix.size()] == ':');
    const Text& at = e.has_value ? e.value : e.key;
    if (!starts) {
      out.push_back(
          Finding(rules::efa_ld_library_path().info,
                  "step '" + s.name.value +
                      "' sets LD_LIBRARY_PATH without /opt/amazon/ofi-nccl/lib:/opt/amazon/efa/lib first")
              .hint("start it with /opt/amazon/ofi-nccl/lib:/opt/amazon/efa/lib: and add other "
                    "directories after them")
              .at_node(at.where, at.length));
    } else if (!keeps_inherited(v)) {
      out.push_back(Finding(rules::efa_ld_library_path().info,
                            "step '" + s.name.value +
                                "' sets LD_LIBRARY_PATH without ${LD_LIBRARY_PATH}; the "
                                "base image's library paths are dropped")
                        .severity(Severity::Warning)
                        .hint("end it with :${LD_LIBRARY_PATH}")
                        .at_node(at.where, at.length));
    }
  });
}

}  // namespace trainimg::recipes
