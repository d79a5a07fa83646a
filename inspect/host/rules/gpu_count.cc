// SPDX-License-Identifier: GPL-3.0-or-later
// gpu-count: seed 000 "Expected results", row GPU ("All GPUs matching the
// instance type recognized"; P6-B200: NVIDIA B200 × 8).
#include "inspect/host/rules.h"

namespace trainimg::host {

namespace {

void check(const RuleInfo& rule, const HostContext& c) {
  const auto& p = c.profile;
  if (c.cannot_tell(rule, "nvidia-smi.csv")) return;
  if (!c.probe_ok("nvidia-smi.csv")) {
    c.add(Finding(rule, "nvidia-smi did not list the GPUs (" + c.probe_state("nvidia-smi.csv") + ")")
              .in(c.file));
    return;
  }
  int n = p.gpu_count.value_or(0);
  if (n == 0) {
    c.add(Finding(rule, "nvidia-smi lists no GPU").in(c.file));
    return;
  }
  if (c.expect.gpus && n != *c.expect.gpus)
    c.add(Finding(rule, "nvidia-smi lists " + std::to_string(n) + " GPUs, expected " +
                            std::to_string(*c.expect.gpus))
              .in(c.file));
  if (c.expect.gpu_model) {
    for (const auto& g : p.gpus)
      if (g.name.find(*c.expect.gpu_model) == std::string::npos) {
        c.add(Finding(rule, "GPU " + std::to_string(g.index) + " is " + g.name + ", expected " +
                                *c.expect.gpu_model)
                  .in(c.file));
        break;
      }
  }
  for (const auto& g : p.gpus)
    if (g.driver_version != p.gpus.front().driver_version) {
      c.add(Finding(rule, "GPU " + std::to_string(g.index) + " reports driver " + g.driver_version +
                              ", GPU " + std::to_string(p.gpus.front().index) + " driver " +
                              p.gpus.front().driver_version)
                .in(c.file));
      break;
    }
  if (!c.expect.gpus && !c.baseline)
    c.note("gpu-count: " + std::to_string(n) + " × " + p.gpu_model.value_or("?") +
           " seen; pass --expect gpus=N to check the count");
  if (c.baseline) {
    auto count = [](const HostProfile& h) {
      return h.gpu_count ? std::optional<std::string>(std::to_string(*h.gpu_count)) : std::nullopt;
    };
    c.drift(rule, "GPU count", count(p), count(*c.baseline));
    c.drift(rule, "GPU model", p.gpu_model, c.baseline->gpu_model);
    c.drift(rule, "NVIDIA driver", p.driver_version, c.baseline->driver_version);
    c.drift(rule, "CUDA driver version", p.cuda_driver_version, c.baseline->cuda_driver_version);
  }
}

}  // namespace

const HostRule kGpuCount{
    {"gpu-count", Severity::Error,
     "nvidia-smi lists no GPU, fewer/more than `gpus=N`, a model other than `gpu-model=`, GPUs with "
     "different drivers, or differs from `--baseline` (count, model, driver, CUDA driver)",
     "check `nvidia-smi --query-gpu=index,name,driver_version --format=csv`; a missing GPU "
     "needs the instance replaced or AWS support, a driver mismatch a fresh DLAMI build",
     "seed 000 Host validation / Expected results (GPU)", "host", "docs/host.md#rules"},
    check};

}  // namespace trainimg::host
