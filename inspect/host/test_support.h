// SPDX-License-Identifier: GPL-3.0-or-later
// Test helpers for the host tests (header only, never in the library): the
// recorded fixtures of tests/fixtures/host, which are written from the seeds'
// examples, not captured on a node (see tests/fixtures/host/README.md).
#pragma once

#include <sys/stat.h>

#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "common/error.h"
#include "inspect/host.h"
#include "inspect/host/checkers.h"
#include "inspect/host/fleet.h"
#include "inspect/host/probes.h"

namespace trainimg::host::testing {

inline std::string fixture(const std::string& rel) {
  return std::string(TRAINIMG_SOURCE_DIR) + "/tests/fixtures/host/" + rel;
}

inline std::string read_fixture(const std::string& rel) {
  std::ifstream in(fixture(rel), std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

inline bool exists(const std::string& p) {
  struct stat st;
  return ::stat(p.c_str(), &st) == 0;
}

/// "file:line:col: message" of the Error that `f` throws, or "no error".
template <class F>
std::string error_of(F f) {
  try {
    f();
  } catch (const Error& e) {
    return e.diagnostic().location() + ": " + e.diagnostic().message;
  }
  return "no error";
}

/// Replays p6-b200/ with a variant overlaid: variants/NAME/X replaces X,
/// X.absent removes it, X.failed / X.timeout record that status.
class OverlayRunner : public ProbeRunner {
 public:
  explicit OverlayRunner(std::string variant) : variant_(std::move(variant)) {}
  ProbeResult run(const ProbeSpec& spec, std::chrono::milliseconds t) override {
    std::string vdir = fixture("variants/" + variant_);
    if (!variant_.empty()) {
      bool overrides = exists(vdir + "/" + spec.id) || exists(vdir + "/" + spec.id + ".failed") ||
                       exists(vdir + "/" + spec.id + ".timeout") || exists(vdir + "/" + spec.id + ".absent");
      if (overrides) return ReplayRunner(vdir).run(spec, t);
    }
    return ReplayRunner(fixture("p6-b200")).run(spec, t);
  }

 private:
  std::string variant_;
};

inline HostProfile seed_profile(const std::string& variant = "") {
  OverlayRunner r(variant);
  return capture(r, std::chrono::seconds(5), variant.empty() ? "bundle:p6-b200" : "bundle:" + variant);
}

/// The seed 000 P6-B200 expectations.
inline constexpr const char* kP6 = "gpus=8,efas=8,gpu-model=B200,efa-driver>=3.3.0,kernel=7.0.0-1014-aws";

inline HostCheckResult check_variant(const std::string& variant, const std::string& expect = kP6,
                                     const HostProfile* baseline = nullptr) {
  HostProfile p = seed_profile(variant);
  HostExpectations e = parse_expectations(expect);
  return check_host(p, e, baseline, "host.json", "base.json");
}

/// Messages of the findings of one rule.
inline std::vector<std::string> messages(const std::vector<Diagnostic>& d, const std::string& rule) {
  std::vector<std::string> out;
  for (const auto& f : d)
    if (f.rule_id == rule) out.push_back(f.message);
  return out;
}
inline std::vector<std::string> messages(const HostCheckResult& r, const std::string& rule) {
  return messages(r.findings, rule);
}

/// "file:line: message" of every finding, for exact positions.
inline std::vector<std::string> located(const std::vector<Diagnostic>& d) {
  std::vector<std::string> out;
  for (const auto& f : d) out.push_back(f.location() + ": " + f.message + " [" + f.rule_id + "]");
  return out;
}

}  // namespace trainimg::host::testing
