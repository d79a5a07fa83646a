// SPDX-License-Identifier: GPL-3.0-or-later
#include <string>

#include "common/version.h"
#include "inspect/rules/rule.h"

namespace trainimg::inspect::rules {

namespace {

// The ncclNetPlugin_vN symbols each NCCL release looks up, from the first
// release of each row on (read from NVIDIA/nccl tags: src/net.cc before
// 2.26, src/plugin/net/net_vN.cc after). 2.19 dropped v4, 2.26 dropped v5.
struct ApiRange {
  const char* since;
  int lo, hi;
};
constexpr ApiRange kNcclNetApis[] = {
    {"2.12", 4, 5}, {"2.13", 4, 6},  {"2.19", 5, 7},  {"2.20", 5, 8},
    {"2.24", 5, 9}, {"2.26", 6, 10}, {"2.28", 6, 11}, {"2.30", 6, 12},
};

const ApiRange* range_for(const std::string& nccl) {
  const ApiRange* r = nullptr;
  for (const auto& row : kNcclNetApis)
    if (compare_versions(release_of(nccl), row.since) >= 0) r = &row;
  return r;
}

std::string list(const std::vector<int>& v) {
  std::string s;
  for (int n : v) s += (s.empty() ? "v" : ", v") + std::to_string(n);
  return s;
}

void check(const RuleInfo& rule, const Context& c, std::vector<Diagnostic>& out) {
  const auto& f = c.facts;
  const auto* p = loaded_plugin(f);
  const auto* nccl = f.nccl();
  if (!p || !p->aws_ofi_nccl || !nccl || nccl->version.empty()) return;
  // aws-ofi-nccl release notes (v1.19.2, v1.20.0, v1.21.1): "backward
  // compatibility with older NCCL versions (NCCL v2.17.1 and later)"; the
  // 1.10 series is where that floor starts (domain.md §7).
  if (!p->version.empty() && compare_versions(release_of(p->version), "1.10") >= 0 &&
      compare_versions(release_of(nccl->version), "2.17.1") < 0) {
    out.push_back(Finding(rule, "aws-ofi-nccl " + p->version +
                                    " needs NCCL 2.17.1 or newer, but the image's NCCL is " + nccl->version +
                                    " (" + nccl->path + ")")
                      .in(c.facts.reference)
                      .path(p->path, p->layer));
    return;
  }
  const ApiRange* r = range_for(nccl->version);
  if (!r || p->net_apis.empty()) return;  // older than the table, or symbols unread
  for (int n : p->net_apis)
    if (n >= r->lo && n <= r->hi) return;
  out.push_back(Finding(rule, "the plugin exports ncclNetPlugin " + list(p->net_apis) + " but NCCL " +
                                  nccl->version + " accepts only v" + std::to_string(r->lo) + "..v" +
                                  std::to_string(r->hi))
                    .in(c.facts.reference)
                    .path(p->path, p->layer));
}
}  // namespace

const ImageRule kOfiNcclNcclCompat{
    {"ofi-nccl-nccl-compat", Severity::Error,
     "the plugin exports no `ncclNetPlugin_vN` that the image's NCCL accepts, or aws-ofi-nccl ≥ 1.10 is "
     "paired with NCCL < 2.17.1",
     "use the aws-ofi-nccl of an EFA installer built for this NCCL (or a newer NGC base)",
     "domain.md §7 (NCCL and aws-ofi-nccl sources)", "image", "docs/inspect.md#rules"},
    check};

}  // namespace trainimg::inspect::rules
