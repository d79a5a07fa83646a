// SPDX-License-Identifier: GPL-3.0-or-later
#include "inspect/rules/rule.h"

namespace trainimg::inspect::rules {

namespace {
std::string strip_slash(std::string s) {
  while (s.size() > 1 && s.back() == '/') s.pop_back();
  return s;
}

void check(const RuleInfo& rule, const Context& c, std::vector<Diagnostic>& out) {
  const auto& f = c.facts;
  if (!f.installer) return;
  auto v = f.env_value("LD_LIBRARY_PATH");
  auto dirs = facts::split_colon(v.value_or(""));
  if (dirs.size() >= 2 && strip_slash(dirs[0]) == "/opt/amazon/ofi-nccl/lib" &&
      strip_slash(dirs[1]) == "/opt/amazon/efa/lib")
    return;
  out.push_back(
      Finding(rule, "LD_LIBRARY_PATH " + (v ? "is '" + *v + "'" : std::string("is not set")) +
                        " in the final environment (" + f.env_from +
                        "); it must start with /opt/amazon/ofi-nccl/lib:/opt/amazon/efa/lib while the "
                        "EFA installer is present")
          .in(c.facts.reference));
}
}  // namespace

const ImageRule kLdLibraryPathOrder{
    {"ld-library-path-order", Severity::Error,
     "/opt/amazon/ofi-nccl/lib and /opt/amazon/efa/lib are not first in LD_LIBRARY_PATH while the installer "
     "is present",
     "ENV LD_LIBRARY_PATH=/opt/amazon/ofi-nccl/lib:/opt/amazon/efa/lib:${LD_LIBRARY_PATH}",
     "seed 002 \"Pitfall ③ — LD_LIBRARY_PATH\"", "image", "docs/inspect.md#rules"},
    check};

}  // namespace trainimg::inspect::rules
