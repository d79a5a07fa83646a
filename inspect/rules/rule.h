// SPDX-License-Identifier: GPL-3.0-or-later
// One image rule = one constant ImageRule (its RuleInfo and a check) in its
// own file under inspect/rules/, listed once in rules.def. Checks read
// only the gathered facts and the expectations and add Diagnostics.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "common/diagnostic.h"
#include "inspect/facts/facts.h"
#include "inspect/inspect.h"

namespace trainimg::inspect::rules {

struct Context {
  const facts::ImageFacts& facts;
  const ImageExpectations& expect;
};

using Check = void (*)(const RuleInfo& rule, const Context& c, std::vector<Diagnostic>& out);

struct ImageRule {
  RuleInfo info;
  Check check;
};

/// Every rule, in catalogue order (domain.md §6 image table).
const std::vector<const ImageRule*>& all_rules();

#define IMAGE_RULE(name) extern const ImageRule name;
#include "inspect/rules/rules.def"
#undef IMAGE_RULE

// Shared lookups of what NCCL and the loader would use.
/// The aws-ofi-nccl plugin NCCL would load for the final NCCL_NET_PLUGIN,
/// else the one libnccl-net-ofi.so resolves to; null when none.
const facts::OfiPlugin* loaded_plugin(const facts::ImageFacts& f);
/// The libfabric.so.1 the loader picks (from the plugin's point of view).
const facts::Libfabric* loaded_libfabric(const facts::ImageFacts& f);
/// Whether the image carries an EFA stack (manifest, EFA libfabric or plugin).
bool has_efa_stack(const facts::ImageFacts& f);

}  // namespace trainimg::inspect::rules
