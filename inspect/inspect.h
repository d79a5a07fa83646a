// SPDX-License-Identifier: GPL-3.0-or-later
// trainimg inspect: read an image without running it, gather the facts of
// its EFA/NCCL/MPI stack (inspect/facts/), judge them with the image rules of
// domain.md §6 (inspect/rules/) against what the host runs, and report.
//
// This header declares expectations, the image rules, the facts' JSON form
// and the report (inspect/expect.cc, inspect/rules/, inspect/report/,
// inspect/inspect.cc). The image library's other public headers, one per
// area, are:
//   - inspect/sources/source.h: the image-source interface, open_source()
//     and SourceOptions (part of this header's API: inspect_image() takes
//     them, so it is included here);
//   - inspect/sources/tar.h: the layer-tar reader and image-config parser
//     that other image sources (builder/import's `docker export`) reuse;
//   - inspect/registry/registry.h: manifest digests, SHA-256 digests, the
//     blob cache and PathLock;
//   - inspect/engine/engine.h: the Docker Engine API client.
// The host library has its own: inspect/host.h. Everything else under
// inspect/ is internal to the library.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/diagnostic.h"
#include "common/report.h"
#include "inspect/sources/source.h"  // SourceOptions

namespace trainimg::host {
struct HostProfile;  // inspect/host.h
}  // namespace trainimg::host

namespace trainimg::inspect {

namespace facts {
struct ImageFacts;  // inspect/facts/facts.h
}  // namespace facts

/// What the image must match: from `--expect` and/or `--host HOST.json`.
struct ImageExpectations {
  std::optional<std::string> efa_installer, libfabric, aws_ofi_nccl, cuda_driver;
  /// Where each came from, for messages: "--expect" or the profile's path.
  std::string efa_installer_from, libfabric_from, aws_ofi_nccl_from, cuda_driver_from;
};

/// Parses "efa-installer=1.50.0,libfabric=2.6.0,aws-ofi-nccl=1.21.1,cuda-driver=13.2".
/// Throws trainimg::Error (naming --expect and the column) on an unknown key,
/// a missing '=', an empty or non-version value, or a repeated key.
ImageExpectations parse_expect(const std::string& spec);

/// The host profile's EFA installer, libfabric, aws-ofi-nccl and CUDA driver
/// versions (absent facts stay unset).
ImageExpectations expectations_from_host(const host::HostProfile& p, const std::string& file);

/// `over` wins where it sets a value.
ImageExpectations merge(ImageExpectations base, const ImageExpectations& over);

/// Every image rule, in catalogue order (domain "image").
std::vector<RuleInfo> image_rules();

/// Runs every image rule; findings in rule order.
std::vector<Diagnostic> check_image(const facts::ImageFacts& f, const ImageExpectations& e);

/// The facts as the `facts` object of trainimg.inspect/v1 (stable order),
/// every field of the facts included, and "facts_version": kFactsVersion.
nlohmann::ordered_json facts_json(const facts::ImageFacts& f);
/// Raised when facts_json changes what it writes (keys only added).
inline constexpr int kFactsVersion = 1;
/// The inverse of facts_json (a sidecar keeps the facts for the job-start
/// gate). The input may be hostile, so it is read strictly: it must be
/// exactly what facts_json writes for some facts of kFactsVersion (every
/// key, no other, each of its type, the derived values agreeing). Else
/// throws trainimg::Error, file `what`, one line naming the key, e.g.
/// "facts/loader_order/0/candidates: expected an array, not string"; facts
/// without facts_version (an older trainimg) are refused that way too.
facts::ImageFacts facts_from_json(const nlohmann::ordered_json& j, const std::string& what);
/// make_report(facts_from_json(j, what), e): the rules judged on recorded
/// facts, without reading the image. Throws as facts_from_json.
Report report_from_facts_json(const nlohmann::ordered_json& j, const ImageExpectations& e,
                              const std::string& what);
/// The facts as the text report's table rows.
std::vector<std::pair<std::string, std::string>> facts_rows(const facts::ImageFacts& f);

/// Opens `uri`, gathers the facts, runs the rules: the whole report.
/// Throws trainimg::Error for unreadable or hostile input.
Report inspect_image(const std::string& uri, const ImageExpectations& e, const SourceOptions& opt = {});
/// The same for the squashfs image open on `fd` (kept open by the caller: a
/// file written but not published yet); `name` names it in the report.
Report inspect_sqsh(int fd, const std::string& name, const ImageExpectations& e);
/// The report for facts already gathered.
Report make_report(const facts::ImageFacts& f, const ImageExpectations& e);

}  // namespace trainimg::inspect
