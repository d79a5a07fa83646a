// SPDX-License-Identifier: GPL-3.0-or-later
#include "common/version.h"
#include "inspect/rules/rule.h"

namespace trainimg::inspect::rules {

namespace {
// Forward compatibility is about CUDA major.minor: 13.2.0 == 13.2.
std::string major_minor(const std::string& v) {
  std::string r = release_of(v);
  auto first = r.find('.');
  if (first == std::string::npos) return r;
  auto second = r.find('.', first + 1);
  return second == std::string::npos ? r : r.substr(0, second);
}

void check(const RuleInfo& rule, const Context& c, std::vector<Diagnostic>& out) {
  const auto& want = c.expect.cuda_driver;
  if (!want) return;
  const facts::Cuda* img = nullptr;
  for (const auto& cu : c.facts.cudas)
    if (!cu.version.empty() && (!img || compare_versions(cu.version, img->version) > 0)) img = &cu;
  if (!img || compare_versions(major_minor(img->version), major_minor(*want)) <= 0) return;
  std::string msg = "image CUDA " + img->version + " is newer than the host driver's CUDA " + *want + " (" +
                    c.expect.cuda_driver_from + ")";
  if (img->compat_libs.empty()) {
    out.push_back(Finding(rule, msg + " and the image has no compat libraries (" + img->path +
                                    "/compat/libcuda.so.*): forward compatibility cannot work")
                      .in(c.facts.reference)
                      .path(img->path, img->layer)
                      .severity(Severity::Warning));
    return;
  }
  out.push_back(
      Finding(rule, msg + ": normal, the container starts with 'CUDA Forward Compatibility mode ENABLED' (" +
                        img->compat_libs.front() + "); verify custom CUDA kernels separately")
          .in(c.facts.reference)
          .path(img->path, img->layer));
}
}  // namespace

const ImageRule kCudaForwardCompat{
    {"cuda-forward-compat", Severity::Info,
     "image CUDA is newer than the host driver's CUDA (normal: forward compatibility); warning when the "
     "image has no "
     "compat libraries",
     "keep the cuda-compat libraries in the image (/usr/local/cuda/compat); verify custom kernels on the "
     "host driver",
     "seed 002 \"Why an NGC base\" (CUDA Forward Compatibility)", "image", "docs/inspect.md#rules"},
    check};

}  // namespace trainimg::inspect::rules
