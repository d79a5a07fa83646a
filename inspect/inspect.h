// SPDX-License-Identifier: GPL-3.0-or-later
// trainimg inspect: read an image without running it, gather the facts of
// its EFA/NCCL/MPI stack (inspect/facts/), judge them with the image rules of
// domain.md §6 (inspect/rules/) against what the host runs, and report.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "common/diagnostic.h"
#include "common/report.h"
#include "inspect/facts/facts.h"
#include "inspect/host/profile.h"
#include "inspect/source.h"

namespace trainimg::inspect {

/// What the image must match: from `--expect` and/or `--host HOST.json`.
struct Expectations {
  std::optional<std::string> efa_installer, libfabric, aws_ofi_nccl, cuda_driver;
  /// Where each came from, for messages: "--expect" or the profile's path.
  std::string efa_installer_from, libfabric_from, aws_ofi_nccl_from, cuda_driver_from;
};

/// Parses "efa-installer=1.50.0,libfabric=2.6.0,aws-ofi-nccl=1.21.1,cuda-driver=13.2".
/// Throws trainimg::Error (naming --expect and the column) on an unknown key,
/// a missing '=', an empty or non-version value, or a repeated key.
Expectations parse_expect(const std::string& spec);

/// The host profile's EFA installer, libfabric, aws-ofi-nccl and CUDA driver
/// versions (absent facts stay unset).
Expectations expectations_from_host(const host::HostProfile& p, const std::string& file);

/// `over` wins where it sets a value.
Expectations merge(Expectations base, const Expectations& over);

/// Every image rule, in catalogue order (domain "image").
std::vector<RuleInfo> image_rules();

/// Runs every image rule; findings in rule order.
std::vector<Diagnostic> check_image(const facts::ImageFacts& f, const Expectations& e);

/// The facts as the `facts` object of trainimg.inspect/v1 (stable order).
nlohmann::ordered_json facts_json(const facts::ImageFacts& f);
/// The facts as the text report's table rows.
std::vector<std::pair<std::string, std::string>> facts_rows(const facts::ImageFacts& f);

/// Opens `uri`, gathers the facts, runs the rules: the whole report.
/// Throws trainimg::Error for unreadable or hostile input.
Report inspect_image(const std::string& uri, const Expectations& e);
/// The report for facts already gathered.
Report make_report(const facts::ImageFacts& f, const Expectations& e);

}  // namespace trainimg::inspect
