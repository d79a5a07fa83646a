// SPDX-License-Identifier: GPL-3.0-or-later
// The one report path of every checking command: flags, policy, render,
// write, exit code.
#include <unistd.h>

#include <iostream>

#include "cmd/cli/cli.h"
#include "common/atomic_file.h"

namespace trainimg::cmd {

void add_report_flags(CLI::App& sub, const std::shared_ptr<ReportFlags>& f, const ReportFlagSet& set) {
  sub.add_option("--format", f->format, set.formats)
      ->check(CLI::IsMember({"text", "json", "sarif", "junit"}));
  sub.add_option("--fail-on", f->fail_on,
                 "exit 1 when a finding is at or above: error (default, or the config's fail-on), warning, "
                 "never")
      ->check(CLI::IsMember({"error", "warning", "never"}));
  sub.add_option("-o,--output", f->output, "write the report to this file (atomically) instead of stdout");
  PolicyFlags& p = f->policy;
  sub.add_option(
      "--config", p.config,
      "Policy file (docs/policy.md); default: the nearest .trainimg.yaml in this directory or a parent, "
      "up to the repository root");
  sub.add_flag("--no-config", p.no_config, "Use no policy file");
  if (set.baseline)
    sub.add_option("--baseline", p.baseline,
                   "Accepted findings (trainimg.baseline/v1): report and fail only on new ones");
  if (set.write_baseline)
    sub.add_option("--write-baseline", p.write_baseline,
                   "Record today's findings as a trainimg.baseline/v1 file and exit 0");
  if (set.show_suppressed)
    sub.add_flag("--show-suppressed", p.show_suppressed, "List the findings policy hid, and why");
}

ReportPlan plan_report(const ReportFlags& f) {
  Format format = parse_format(f.format);
  policy::Policy pol = load_policy(f.policy);
  FailOn fail_on = resolve_fail_on(f.fail_on, pol);
  return {format, std::move(pol), fail_on};
}

bool Checked::apply_policy(const policy::Policy& p, const PolicyFlags& f) {
  PolicyFlags flags = f;
  if (!baseline.empty()) flags.baseline = baseline;
  bool wrote = apply_policy_flags(report, flags, p, sources);
  if (after_policy) after_policy(report);
  return wrote;
}

std::string Checked::render(Format format, bool color) const {
  TextOptions opt;
  opt.color = color;
  opt.sources = sources;
  return trainimg::render(report, format, opt);
}

int Checked::exit_code(FailOn fail_on) const {
  return trainimg::exit_code(report, fail_on);
}

int run_check(const ReportFlags& f,
              const std::function<std::unique_ptr<Outcome>(const policy::Policy&)>& check) {
  ReportPlan plan = plan_report(f);
  std::unique_ptr<Outcome> outcome = check(plan.policy);
  bool wrote_baseline = outcome->apply_policy(plan.policy, f.policy);
  bool to_stdout = f.output.empty() || f.output == "-";
  std::string text =
      outcome->render(plan.format, to_stdout && plan.format == Format::Text && want_color(STDOUT_FILENO));
  if (to_stdout)
    std::cout << text << std::flush;
  else
    write_file_atomic(f.output, text);
  outcome->finish();
  return wrote_baseline ? int(kExitOk) : outcome->exit_code(plan.fail_on);
}

}  // namespace trainimg::cmd
