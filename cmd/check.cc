// SPDX-License-Identifier: GPL-3.0-or-later
// trainimg check nccl-log|nccl-tests FILE (seeds 000, 002).
#include <unistd.h>

#include <iostream>
#include <map>
#include <memory>

#include "cmd/command.h"
#include "common/error.h"
#include "common/report.h"
#include "common/source_file.h"
#include "inspect/host.h"

namespace trainimg::cmd {

namespace {

using namespace trainimg::host;

struct Common {
  std::string file;
  std::string format = "text";
  std::string fail_on;  // empty: the config's, else error
  std::shared_ptr<PolicyFlags> policy = std::make_shared<PolicyFlags>();
};

void add_common(CLI::App& sub, Common& c, const char* what) {
  sub.add_option("FILE", c.file, what)->required();
  sub.add_option("--format", c.format, "text, json, sarif or junit");
  sub.add_option("--fail-on", c.fail_on, "error, warning or never (default error, or the config's fail-on)");
  add_policy_flags(sub, c.policy);
}

int emit(Report& r, CheckOutput& out, const Common& c, Format fmt, const policy::Policy& pol) {
  r.inputs = {c.file};
  r.findings = std::move(out.findings);
  r.notes = std::move(out.notes);
  r.text_facts = std::move(out.text_facts);
  r.facts = std::move(out.facts);
  bool wrote_baseline = apply_policy_flags(r, *c.policy, pol);
  std::cout << render(r, fmt, {want_color(STDOUT_FILENO) && fmt == Format::Text, nullptr});
  return wrote_baseline ? int(kExitOk) : exit_code(r, resolve_fail_on(c.fail_on, pol));
}

void setup_nccl_log(CLI::App& sub, Runner& run) {
  auto c = std::make_shared<Common>();
  auto nics = std::make_shared<int>(0);
  add_common(sub, *c, "An NCCL_DEBUG=INFO log (all ranks, interleaved, '-' = stdin)");
  sub.add_option("--expect-nics", *nics, "The `found N nics` every process must report (EFAs per node)");
  run = [c, nics] {
    Format fmt = parse_format(c->format);
    policy::Policy pol = load_policy(*c->policy);
    resolve_fail_on(c->fail_on, pol);
    SourceFile src = SourceFile::read(c->file);
    NcclLog log = parse_nccl_log(src.text());
    CheckOutput out =
        check_nccl_log(log, src.text(), c->file, *nics > 0 ? std::optional<int>(*nics) : std::nullopt);
    Report r;
    r.kind = "nccl-log";
    r.rules = {nccl_log_rule()};
    return emit(r, out, *c, fmt, pol);
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
    Format fmt = parse_format(c->format);
    policy::Policy pol = load_policy(*c->policy);
    resolve_fail_on(c->fail_on, pol);
    if (*baseline < 0) throw Error("--baseline-busbw", "must be a positive GB/s figure");
    if (!(*ratio > 0 && *ratio <= 1)) throw Error("--min-ratio", "must be in (0, 1]");
    SourceFile src = SourceFile::read(c->file);
    NcclTests t = parse_nccl_tests(src.text(), c->file);
    CheckOutput out = check_nccl_tests(
        t, src.text(), c->file, *baseline > 0 ? std::optional<double>(*baseline) : std::nullopt, *ratio);
    Report r;
    r.kind = "nccl-tests";
    r.rules = {nccl_tests_rule()};
    return emit(r, out, *c, fmt, pol);
  };
}

}  // namespace

void setup_check(CLI::App& sub, Runner& run) {
  sub.require_subcommand(1, 1);
  auto runners = std::make_shared<std::map<CLI::App*, Runner>>();
  CLI::App* log = sub.add_subcommand(
      "nccl-log", "Check an NCCL_DEBUG=INFO log: EFA via Libfabric, no Socket fallback, nics");
  setup_nccl_log(*log, (*runners)[log]);
  CLI::App* tests =
      sub.add_subcommand("nccl-tests", "Check nccl-tests output: out-of-bounds, #wrong, busbw vs baseline");
  setup_nccl_tests(*tests, (*runners)[tests]);
  run = [&sub, runners] {
    for (CLI::App* child : sub.get_subcommands()) return (*runners)[child]();
    return int(kExitUsage);
  };
}

}  // namespace trainimg::cmd
