// SPDX-License-Identifier: GPL-3.0-or-later
// efa-ld-library-path: after the installer, the installer's aws-ofi-nccl and
// libfabric must come first in LD_LIBRARY_PATH (the base keeps older copies),
// and the inherited value must be kept.
#include <algorithm>

#include "recipes/dockerfile/expand.h"
#include "recipes/rules/rules.h"

namespace trainimg::recipes::rules {
namespace {

constexpr const char* kExpected = "/opt/amazon/ofi-nccl/lib:/opt/amazon/efa/lib:${LD_LIBRARY_PATH}";

bool same_dir(std::string a, const std::string& b) {
  while (a.size() > 1 && a.back() == '/') a.pop_back();
  return a == b;
}

void check(const Context& c) {
  const RuleInfo& info = efa_ld_library_path().info;
  auto runs = installer_runs(c);
  if (runs.empty()) return;
  int last = 0;
  for (const auto& r : runs) last = std::max(last, final_index(c, r.run));
  bool set_after = false;
  for (size_t i = static_cast<size_t>(last) + 1; i < c.final_image.size(); ++i) {
    const Instruction* in = c.final_image[i];
    if (in->keyword != "ENV") continue;
    for (const KeyValue& kv : in->pairs) {
      if (kv.key != "LD_LIBRARY_PATH") continue;
      set_after = true;
      Span at = kv.value_span.length ? kv.value_span : kv.key_span;
      auto dirs = split_path_list(kv.value);
      if (dirs.size() < 2 || !same_dir(dirs[0], "/opt/amazon/ofi-nccl/lib") || !same_dir(dirs[1], "/opt/amazon/efa/lib")) {
        c.report(info, Severity::Error, at,
                 "LD_LIBRARY_PATH does not start with /opt/amazon/ofi-nccl/lib:/opt/amazon/efa/lib (it is '" + kv.value + "')");
        continue;
      }
      auto refs = referenced_vars(kv.raw_value);
      if (std::find(refs.begin(), refs.end(), "LD_LIBRARY_PATH") == refs.end())
        c.report(info, Severity::Warning, at, "LD_LIBRARY_PATH drops the inherited ${LD_LIBRARY_PATH} of the base image");
    }
  }
  if (!set_after) {
    const InstallerRun& r = runs.back();
    c.report(info, Severity::Error, r.argv[0]->span,
             std::string("no ENV LD_LIBRARY_PATH after efa_installer.sh: add ENV LD_LIBRARY_PATH=") + kExpected);
  }
}

}  // namespace

const Rule& efa_ld_library_path() {
  static const Rule r{{"efa-ld-library-path", Severity::Error,
                       "after the installer, LD_LIBRARY_PATH does not start with "
                       "/opt/amazon/ofi-nccl/lib:/opt/amazon/efa/lib; warning when it drops the inherited "
                       "${LD_LIBRARY_PATH}",
                       std::string("after the installer RUN: ENV LD_LIBRARY_PATH=") + kExpected,
                       "seed 002, Pitfall 3: LD_LIBRARY_PATH", "dockerfile"},
                      check};
  return r;
}

}  // namespace trainimg::recipes::rules
