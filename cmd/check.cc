// SPDX-License-Identifier: GPL-3.0-or-later
// trainimg check nccl-log|nccl-tests FILE [--format …] [--fail-on …] [-o REPORT] [policy flags]
// (seeds 000, 002).
#include <map>
#include <memory>

#include "cmd/command.h"
#include "inspect/host/checkers.h"

namespace trainimg::cmd {

namespace {

using namespace trainimg::host;

struct Common {
  std::string file;
  std::shared_ptr<ReportFlags> report = std::make_shared<ReportFlags>();
};

void add_common(CLI::App& sub, Common& c, const char* what) {
  sub.add_option("FILE", c.file, what)->required();
  add_report_flags(sub, c.report);
}

void setup_nccl_log(CLI::App& sub, Runner& run) {
  auto c = std::make_shared<Common>();
  auto nics = std::make_shared<int>(0);
  add_common(sub, *c, "An NCCL_DEBUG=INFO log (all ranks, interleaved, '-' = stdin)");
  sub.add_option("--expect-nics", *nics, "The `found N nics` every process must report (EFAs per node)");
  run = [c, nics] {
    return run_check(*c->report, [&](const policy::Policy&) {
      return std::make_unique<Checked>(
          nccl_log_report(c->file, *nics > 0 ? std::optional<int>(*nics) : std::nullopt));
    });
  };
}

void setup_nccl_tests(CLI::App& sub, Runner& run) {
  auto c = std::make_shared<Common>();
  auto baseline = std::make_shared<double>(0);
  auto ratio = std::make_shared<double>(0.9);
  add_common(sub, *c, "nccl-tests output (all_reduce_perf and friends, '-' = stdin)");
  sub.add_option("--baseline-busbw", *baseline,
                 "Reference busbw in GB/s at the largest size (seed 000: 711 on P6-B200)");
  sub.add_option("--min-ratio", *ratio, "Fail (error) below this fraction of the baseline (default 0.9)");
  run = [c, baseline, ratio] {
    return run_check(*c->report, [&](const policy::Policy&) {
      // 0: no baseline; a negative one is refused.
      auto base = *baseline != 0 ? std::optional<double>(*baseline) : std::nullopt;
      return std::make_unique<Checked>(nccl_tests_report(c->file, base, *ratio));
    });
  };
}

const Command kCheckCommands[] = {
    {"nccl-log", "Check an NCCL_DEBUG=INFO log: EFA via Libfabric, no Socket fallback, nics", setup_nccl_log},
    {"nccl-tests", "Check nccl-tests output: out-of-bounds, #wrong, busbw vs baseline", setup_nccl_tests},
};

}  // namespace

void setup_check(CLI::App& sub, Runner& run) {
  run = add_commands(sub, kCheckCommands);
}

}  // namespace trainimg::cmd
