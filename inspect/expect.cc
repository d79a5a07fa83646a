// SPDX-License-Identifier: GPL-3.0-or-later
// --expect and --host: what the image is judged against.
#include <set>

#include "common/error.h"
#include "common/version.h"
#include "inspect/host.h"
#include "inspect/inspect.h"

namespace trainimg::inspect {

namespace {
[[noreturn]] void bad(const std::string& spec, size_t col, const std::string& msg, const std::string& hint) {
  Diagnostic d;
  d.file = "--expect";
  d.line = 1;
  d.column = static_cast<int>(col) + 1;
  d.source_line = spec;
  d.message = msg;
  d.hint = hint;
  throw Error(d);
}
}  // namespace

ImageExpectations parse_expect(const std::string& spec) {
  static const char* kHint = "use --expect efa-installer=V,libfabric=V,aws-ofi-nccl=V,cuda-driver=V";
  ImageExpectations e;
  std::set<std::string> seen;
  size_t b = 0;
  while (b <= spec.size()) {
    size_t end = spec.find(',', b);
    if (end == std::string::npos) end = spec.size();
    std::string item = spec.substr(b, end - b);
    size_t eq = item.find('=');
    if (eq == std::string::npos) bad(spec, b, "expected KEY=VERSION, found '" + item + "'", kHint);
    std::string key = item.substr(0, eq), val = item.substr(eq + 1);
    if (!looks_like_version(val)) bad(spec, b + eq + 1, "'" + val + "' is not a version for " + key, kHint);
    if (!seen.insert(key).second) bad(spec, b, "'" + key + "' given twice", kHint);
    if (key == "efa-installer")
      e.efa_installer = val, e.efa_installer_from = "--expect";
    else if (key == "libfabric")
      e.libfabric = val, e.libfabric_from = "--expect";
    else if (key == "aws-ofi-nccl")
      e.aws_ofi_nccl = val, e.aws_ofi_nccl_from = "--expect";
    else if (key == "cuda-driver")
      e.cuda_driver = val, e.cuda_driver_from = "--expect";
    else
      bad(spec, b, "unknown key '" + key + "'", kHint);
    b = end + 1;
  }
  return e;
}

ImageExpectations expectations_from_host(const host::HostProfile& p, const std::string& file) {
  ImageExpectations e;
  if ((e.efa_installer = p.efa_installer_version)) e.efa_installer_from = file;
  if ((e.libfabric = p.libfabric_version)) e.libfabric_from = file;
  if ((e.aws_ofi_nccl = p.ofi_nccl_version)) e.aws_ofi_nccl_from = file;
  if ((e.cuda_driver = p.cuda_driver_version)) e.cuda_driver_from = file;
  return e;
}

ImageExpectations merge(ImageExpectations base, const ImageExpectations& over) {
  if (over.efa_installer)
    base.efa_installer = over.efa_installer, base.efa_installer_from = over.efa_installer_from;
  if (over.libfabric) base.libfabric = over.libfabric, base.libfabric_from = over.libfabric_from;
  if (over.aws_ofi_nccl)
    base.aws_ofi_nccl = over.aws_ofi_nccl, base.aws_ofi_nccl_from = over.aws_ofi_nccl_from;
  if (over.cuda_driver) base.cuda_driver = over.cuda_driver, base.cuda_driver_from = over.cuda_driver_from;
  return base;
}

}  // namespace trainimg::inspect
