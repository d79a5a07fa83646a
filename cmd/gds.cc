// SPDX-License-Identifier: GPL-3.0-or-later
// trainimg gds check (seed 004): gdscheck -p, nvidia-fs version, LNet EFA
// interfaces, and the before/after counter judgement of a gdsio run
// (host::check_gds); [--format …] [--fail-on …] [-o REPORT] [policy flags].
#include "cmd/command.h"
#include "inspect/host/checkers.h"

namespace trainimg::cmd {

namespace {

void setup_gds_check(CLI::App& sub, Runner& run) {
  auto o = std::make_shared<host::GdsInputs>();
  sub.add_flag("--live", o->live,
               "Run gdscheck -p, read /proc/driver/nvidia-fs/stats and lnetctl on this node");
  sub.add_option("--gdscheck", o->gdscheck, "Saved `gdscheck -p` output");
  sub.add_option("--stats-before", o->stats_before, "/proc/driver/nvidia-fs/stats before the gdsio run");
  sub.add_option("--stats-after", o->stats_after, "/proc/driver/nvidia-fs/stats after the gdsio run");
  sub.add_option("--mode", o->mode, "What ran between them: gds-write, gds-read (write then read) or cpu");
  sub.add_option("--io-size", o->io_size, "gdsio -i size, for the Sparse Reads arithmetic (default 1M)");
  sub.add_option("--lnet", o->lnet, "Saved `lnetctl net show --net efa` output");
  sub.add_option("--lnet-before", o->lnet_before,
                 "send_count/recv_count lines before the run (lnetctl … -v)");
  sub.add_option("--lnet-after", o->lnet_after, "send_count/recv_count lines after the run");
  sub.add_option("--expect-efas", o->expect_efas, "EFA interfaces LNet must have (seed 004 baseline: 8)");
  sub.add_option("--min-nvidia-fs", o->min_nvidia_fs,
                 "Minimum nvidia-fs version (default 2.24.2, FSx for Lustre)");
  auto rf = std::make_shared<ReportFlags>();
  add_report_flags(sub, rf);
  sub.add_option("--timeout", o->timeout, "Timeout in seconds for each --live command (default 60)");
  run = [o, rf] {
    return run_check(*rf,
                     [&](const policy::Policy&) { return std::make_unique<Checked>(host::check_gds(*o)); });
  };
}

const Command kGdsCommands[] = {
    {"check", "Check GPUDirect Storage over EFA (gdscheck -p, nvidia-fs counters, LNet)", setup_gds_check},
};

}  // namespace

void setup_gds(CLI::App& sub, Runner& run) {
  run = add_commands(sub, kGdsCommands);
}

}  // namespace trainimg::cmd
