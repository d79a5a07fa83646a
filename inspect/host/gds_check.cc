// SPDX-License-Identifier: GPL-3.0-or-later
// `trainimg gds check` (seed 004): which inputs are read (saved outputs, or
// the live probes: gdscheck -p, /proc/driver/nvidia-fs/stats, lnetctl),
// which nvidia-fs version is judged, and the report before policy.
#include <algorithm>

#include "common/error.h"
#include "common/source_file.h"
#include "common/units.h"
#include "inspect/host/checkers.h"
#include "inspect/host/probes.h"
#include "inspect/host/rules.h"

namespace trainimg::host {

namespace {

std::string live_output(const ProbeSpec& spec, double timeout, CheckOutput& out, const RuleInfo& rule) {
  ExecRunner runner;
  ProbeResult r = runner.run(spec, std::chrono::milliseconds(static_cast<long long>(timeout * 1000)));
  if (r.status != ProbeStatus::Ok) {
    out.findings.push_back(
        Finding(rule, spec.command + ": " + std::string(to_string(r.status)) +
                          (r.error.empty() ? "" : " (" + r.error.substr(0, r.error.find('\n')) + ")"))
            .in("live"));
    return {};
  }
  return r.output;
}

}  // namespace

Report check_gds(const GdsInputs& o) {
  auto parsed = parse_byte_size(o.io_size);
  if (!parsed || *parsed == 0) throw Error("--io-size", "\"" + o.io_size + "\" is not a size (e.g. 1M)");
  const auto io = static_cast<long long>(*parsed);  // at most 2^63 - 1
  if (o.live && !o.gdscheck.empty()) throw Error("gds check", "give --live or --gdscheck FILE, not both");
  if (o.stats_before.empty() != o.stats_after.empty())
    throw Error("gds check", "--stats-before and --stats-after go together");
  if (!o.stats_before.empty() && o.mode.empty())
    throw Error("gds check", "--stats-before/--stats-after need --mode gds-write|gds-read|cpu");
  if (o.lnet_before.empty() != o.lnet_after.empty())
    throw Error("gds check", "--lnet-before and --lnet-after go together");
  if (!o.live && o.gdscheck.empty() && o.stats_before.empty() && o.lnet.empty() && o.lnet_before.empty())
    throw Error(
        "gds check", "nothing to check",
        "give --live, --gdscheck FILE, --stats-before/--stats-after, --lnet or --lnet-before/--lnet-after");
  std::optional<GdsMode> mode;
  if (!o.mode.empty()) mode = parse_gds_mode(o.mode);
  std::optional<int> efas = o.expect_efas > 0 ? std::optional<int>(o.expect_efas) : std::nullopt;

  Report r;
  r.kind = "gds";
  CheckOutput out;
  std::optional<std::string> nvfs_version;
  bool nvfs_two_part = false;
  std::string nvfs_file;

  // Step 3: gdscheck -p.
  std::string gdscheck_text, gdscheck_name = o.gdscheck;
  if (o.live) {
    ProbeSpec spec;
    spec.id = "gdscheck";
    spec.argv = {"gdscheck", "-p"};
    spec.command = "/usr/local/cuda/gds/tools/gdscheck -p";
    spec.fallbacks = {"/usr/local/cuda/gds/tools/gdscheck"};
    gdscheck_name = "gdscheck -p";
    gdscheck_text = live_output(spec, o.timeout, out, kGdscheck.info);
  } else if (!o.gdscheck.empty()) {
    gdscheck_text = SourceFile::read(o.gdscheck).text();
  }
  if (o.live || !o.gdscheck.empty()) {
    std::optional<GdscheckReport> g;
    if (!gdscheck_text.empty() || !o.gdscheck.empty()) g = parse_gdscheck(gdscheck_text);
    TextInput in;
    in.file = gdscheck_name;
    in.text = gdscheck_text;
    in.gdscheck = g ? &*g : nullptr;
    in.min_nvidia_fs = o.min_nvidia_fs;
    run_text_rules(TextSource::Gdscheck, in, r.rules, out);
    if (g && g->nvidia_fs_version) {
      nvfs_version = g->nvidia_fs_version;
      nvfs_two_part = std::count(g->nvidia_fs_version->begin(), g->nvidia_fs_version->end(), '.') == 1;
      nvfs_file = gdscheck_name;
    }
  }

  // Step 1 + 4: nvidia-fs stats.
  std::optional<NvfsStats> live_stats;
  if (o.live) {
    ProbeSpec spec;
    spec.id = "nvidia-fs-stats";
    spec.kind = ProbeSpec::Kind::ReadFile;
    spec.path = "/proc/driver/nvidia-fs/stats";
    spec.command = "cat /proc/driver/nvidia-fs/stats";
    std::string text = live_output(spec, o.timeout, out, kNvidiaFs.info);
    if (!text.empty()) live_stats = parse_nvfs_stats(text, spec.path);
    if (live_stats && live_stats->driver_version) {
      nvfs_version = live_stats->driver_version;
      nvfs_two_part = false;
      nvfs_file = spec.path;
    }
  }
  if (!o.stats_before.empty()) {
    NvfsStats before = parse_nvfs_stats(SourceFile::read(o.stats_before).text(), o.stats_before);
    NvfsStats after = parse_nvfs_stats(SourceFile::read(o.stats_after).text(), o.stats_after);
    TextInput in;
    in.file = o.stats_after;
    in.stats_before = &before;
    in.stats_after = &after;
    in.before_file = o.stats_before;
    in.mode = *mode;
    in.io_size = io;
    run_text_rules(TextSource::NvfsCounters, in, r.rules, out);
    if (after.driver_version) {
      nvfs_version = after.driver_version;
      nvfs_two_part = false;
      nvfs_file = o.stats_after;
    }
  }
  if (nvfs_version || o.live) {
    r.rules.push_back(kNvidiaFs.info);
    check_nvidia_fs_version(nvfs_version, nvfs_two_part, nvfs_file.empty() ? "live" : nvfs_file,
                            o.min_nvidia_fs, out);
  }

  // Step 2 + 4: LNet.
  if (o.live || !o.lnet.empty() || !o.lnet_before.empty()) r.rules.push_back(kLnetEfa.info);
  if (o.live) {
    ProbeSpec spec;
    spec.id = "lnetctl";
    spec.argv = {"lnetctl", "net", "show", "--net", "efa"};
    spec.command = "lnetctl net show --net efa";
    spec.fallbacks = {"/usr/sbin/lnetctl", "/sbin/lnetctl"};
    std::string text = live_output(spec, o.timeout, out, kLnetEfa.info);
    if (!text.empty()) check_lnet_interfaces(parse_lnet(text, spec.command), spec.command, efas, out);
  } else if (!o.lnet.empty()) {
    check_lnet_interfaces(parse_lnet(SourceFile::read(o.lnet).text(), o.lnet), o.lnet, efas, out);
  }
  if (!o.lnet_before.empty()) {
    auto before = parse_lnet(SourceFile::read(o.lnet_before).text(), o.lnet_before);
    auto after = parse_lnet(SourceFile::read(o.lnet_after).text(), o.lnet_after);
    check_lnet_counters(before, after, o.lnet_after, efas, mode && *mode != GdsMode::Cpu, out);
  }

  r.inputs.clear();
  for (const auto* f : {&o.gdscheck, &o.stats_before, &o.stats_after, &o.lnet, &o.lnet_before, &o.lnet_after})
    if (!f->empty()) r.inputs.push_back(*f);
  if (o.live) r.inputs.insert(r.inputs.begin(), "live");
  r.findings = std::move(out.findings);
  r.notes = std::move(out.notes);
  r.text_facts = std::move(out.text_facts);
  if (mode)
    r.text_facts.insert(
        r.text_facts.begin(),
        {"mode", o.mode + " (I/O size " + format_exact_byte_size(static_cast<uint64_t>(io)) + ")"});
  return r;
}

}  // namespace trainimg::host
