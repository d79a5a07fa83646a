// SPDX-License-Identifier: GPL-3.0-or-later
// nccl-log: seed 002 "If the following appears in the NCCL log" (`Using
// network Libfabric` + `provider is efa`; `Using network Socket` = TCP
// fallback) and seed 000 (found N nics; NCCL_NET=IB fails on ConnectX-7).
#include <algorithm>
#include <set>

#include "inspect/host/parsers.h"
#include "inspect/host/rules.h"

namespace trainimg::host {

namespace {

void check(const RuleInfo& rule, const TextInput& in, CheckOutput& out) {
  const NcclLog& log = *in.nccl_log;
  const std::string& file = in.file;
  const std::optional<int>& expect_nics = in.expect_nics;
  auto lines = split_lines(in.text);
  auto at = [&](int line, std::string msg) {
    Diagnostic d = line_finding(rule, std::move(msg), file, lines, line);
    if (line > 0 && line <= static_cast<int>(lines.size()))
      // Point the caret at the phrase the seeds tell people to look for.
      for (std::string_view phrase : {"Using network", "NET/OFI Selected", "via NET/"})
        if (size_t at = lines[line - 1].find(phrase); at != std::string_view::npos) {
          d.column = static_cast<int>(at) + 1;
          d.length = static_cast<int>(phrase.size());
          break;
        }
    out.findings.push_back(std::move(d));
  };
  if (log.nccl_lines == 0) {
    at(0,
       "no NCCL_DEBUG=INFO lines (\"host:pid:tid [dev] NCCL INFO …\") in the log: run with NCCL_DEBUG=INFO");
    return;
  }
  std::set<std::string> hosts;
  int libfabric = 0, efa = 0, undecided = 0, by_channels = 0;
  nlohmann::ordered_json procs = nlohmann::ordered_json::array();
  for (const auto& p : log.processes) {
    hosts.insert(p.host);
    std::string who = p.host + ":" + p.pid;
    // Without its "Using network" line (a cut or grepped log), the
    // network its channels ran over.
    const std::optional<std::string>& net = p.network ? p.network : p.channel_network;
    const int net_line = p.network ? p.network_line : p.channel_line;
    const std::string said =
        net ? (p.network ? "`Using network " + *net + "`" : "`via NET/" + *net + "` channels") : "";
    if (!net) {
      ++undecided;
    } else if (is_libfabric(*net)) {
      ++libfabric;
      by_channels += !p.network;
    } else if (*net == "Socket") {
      at(net_line, who + " uses " + said + ": NCCL fell back to TCP, not EFA");
    } else {
      at(net_line,
         who + " uses " + said + ", not Libfabric" +
             (*net == "IB" ? " (where EFA is the fabric, forcing IB with NCCL_NET=IB puts the link-DOWN "
                             "ConnectX-7 devices in use and initialisation fails)"
                           : ""));
    }
    if (p.provider) {
      if (*p.provider != "efa")
        at(p.provider_line, who + " selected provider " + *p.provider + ", not efa");
      else
        ++efa;
      if (expect_nics && p.nics && *p.nics != *expect_nics)
        at(p.provider_line,
           who + " found " + std::to_string(*p.nics) + " nics, expected " + std::to_string(*expect_nics));
    }
    nlohmann::ordered_json j;
    j["host"] = p.host;
    j["pid"] = p.pid;
    j["line"] = p.first_line;
    j["network"] = p.network ? nlohmann::ordered_json(*p.network) : nlohmann::ordered_json(nullptr);
    j["provider"] = p.provider ? nlohmann::ordered_json(*p.provider) : nlohmann::ordered_json(nullptr);
    j["fabric"] = p.fabric ? nlohmann::ordered_json(*p.fabric) : nlohmann::ordered_json(nullptr);
    j["nics"] = p.nics ? nlohmann::ordered_json(*p.nics) : nlohmann::ordered_json(nullptr);
    procs.push_back(std::move(j));
  }
  if (libfabric == 0) at(0, "no process logged `Using network Libfabric`: the EFA path was not used");
  if (efa == 0)
    at(0, "no process logged `NET/OFI Selected provider is efa`: the OFI plugin did not select EFA");
  size_t total = log.processes.size();
  out.text_facts.emplace_back("processes",
                              std::to_string(total) + " on " + std::to_string(hosts.size()) + " host(s)");
  out.text_facts.emplace_back("Using network Libfabric",
                              std::to_string(libfabric) + "/" + std::to_string(total));
  out.text_facts.emplace_back("provider is efa", std::to_string(efa) + "/" + std::to_string(total));
  for (const auto& p : log.processes)
    if (p.nics) {
      out.text_facts.emplace_back("found N nics", std::to_string(*p.nics) + " (" + p.host + ":" + p.pid +
                                                      ", line " + std::to_string(p.provider_line) + ")");
      break;
    }
  if (expect_nics && efa > 0 &&
      std::none_of(log.processes.begin(), log.processes.end(), [](const NcclProcess& p) { return p.nics; }))
    out.notes.push_back(
        "--expect-nics not checked: no process printed `(found N nics)` (aws-ofi-nccl before "
        "1.6.0 prints none)");
  if (by_channels > 0)
    out.notes.push_back(
        std::to_string(by_channels) +
        " process(es) logged no `Using network` line; their `via NET/Libfabric` channel lines "
        "count (the log is cut?)");
  if (log.unprefixed_lines > 0)
    out.notes.push_back(std::to_string(log.unprefixed_lines) +
                        " NCCL line(s) without their \"host:pid:tid [dev]\" prefix, counted as one process");
  if (undecided > 0)
    out.notes.push_back(std::to_string(undecided) +
                        " process(es) logged no `Using network` line (not a rank that "
                        "opened a network, or the log is cut)");
  out.facts["processes"] = procs;
}

}  // namespace

const TextRule kNcclLog{
    {"nccl-log", Severity::Error,
     "an NCCL_DEBUG=INFO log has no NCCL INFO lines, a process `Using network Socket`/`IB`/other, no `Using "
     "network Libfabric`, no `provider is efa`, or `found N nics` ≠ `--expect-nics`",
     "keep NCCL_NET_PLUGIN=ofi and the installer's LD_LIBRARY_PATH in the image, drop "
     "NCCL_NET=IB and other InfiniBand-only NCCL_* settings, check /dev/infiniband in the container",
     "seed 002 (NCCL log check), seed 000 (When ConnectX-7 devices also appear)", "host",
     "docs/host.md#rules"},
    TextSource::NcclLog,
    check};

CheckOutput check_nccl_log(const NcclLog& log, std::string_view text, const std::string& file,
                           std::optional<int> expect_nics) {
  TextInput in;
  in.file = file;
  in.text = text;
  in.nccl_log = &log;
  in.expect_nics = expect_nics;
  CheckOutput out;
  kNcclLog.check(kNcclLog.info, in, out);
  return out;
}

}  // namespace trainimg::host
