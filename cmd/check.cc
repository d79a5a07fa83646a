// SPDX-License-Identifier: GPL-3.0-or-later
// trainimg check nccl-log|nccl-tests FILE [--format …] [--fail-on …] [-o REPORT] [policy flags]
// (seeds 000, 002).
#include <map>
#include <memory>

#include "cmd/command.h"
#include "common/error.h"
#include "common/source_file.h"
#include "inspect/host.h"

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

std::unique_ptr<Checked> checked(const char* kind, const RuleInfo& rule, const std::string& file,
                                 CheckOutput out) {
  Report r;
  r.kind = kind;
  r.rules = {rule};
  r.inputs = {file};
  r.findings = std::move(out.findings);
  r.notes = std::move(out.notes);
  r.text_facts = std::move(out.text_facts);
  r.facts = std::move(out.facts);
  return std::make_unique<Checked>(std::move(r));
}

void setup_nccl_log(CLI::App& sub, Runner& run) {
  auto c = std::make_shared<Common>();
  auto nics = std::make_shared<int>(0);
  add_common(sub, *c, "An NCCL_DEBUG=INFO log (all ranks, interleaved, '-' = stdin)");
  sub.add_option("--expect-nics", *nics, "The `found N nics` every process must report (EFAs per node)");
  run = [c, nics] {
    return run_check(*c->report, [&](const policy::Policy&) {
      SourceFile src = SourceFile::read(c->file);
      NcclLog log = parse_nccl_log(src.text());
      return checked(
          "nccl-log", nccl_log_rule(), c->file,
          check_nccl_log(log, src.text(), c->file, *nics > 0 ? std::optional<int>(*nics) : std::nullopt));
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
      if (*baseline < 0) throw Error("--baseline-busbw", "must be a positive GB/s figure");
      if (!(*ratio > 0 && *ratio <= 1)) throw Error("--min-ratio", "must be in (0, 1]");
      SourceFile src = SourceFile::read(c->file);
      NcclTests t = parse_nccl_tests(src.text(), c->file);
      return checked(
          "nccl-tests", nccl_tests_rule(), c->file,
          check_nccl_tests(t, src.text(), c->file,
                           *baseline > 0 ? std::optional<double>(*baseline) : std::nullopt, *ratio));
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
