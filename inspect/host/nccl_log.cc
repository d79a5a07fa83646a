// SPDX-License-Identifier: GPL-3.0-or-later
// NCCL_DEBUG=INFO logs: every line "host:pid:tid [dev] NCCL INFO …", possibly
// behind an srun label or timestamp, ranks interleaved.
#include <limits>
#include <map>
#include <regex>

#include "inspect/host/parsers.h"

namespace trainimg::host {

// aws-ofi-nccl 1.11.0 and earlier named its plugin "AWS Libfabric"; later
// releases answer to "Libfabric", and take "AWS Libfabric" or "OFI" from
// NCCL_NET (nvidia_plugin_name_fixup in aws-ofi-nccl's plugin interface).
bool is_libfabric(std::string_view network) {
  return network == "Libfabric" || network == "AWS Libfabric" || network == "OFI";
}

NcclLog parse_nccl_log(std::string_view text) {
  static const std::regex kPrefix(R"(([^\s:]+):(\d+):(\d+) \[[^\]]*\] NCCL (INFO|WARN) (.*)$)");
  // One word, or two for "AWS Libfabric".
  static const std::regex kNetwork(R"(^Using network ((?:AWS )?\S+))");
  // aws-ofi-nccl before 1.6.0 printed no "(found N nics)".
  static const std::regex kProvider(
      R"(NET/OFI Selected [Pp]rovider is ([^,\s(]+)(?:, fabric is ([^\s(]+))?(?:.*\(found (\d+) nics\))?)");
  // A line quoted without its "host:pid:tid [dev]" prefix (cut by a log
  // collector, or pasted): one process of unknown host.
  static const std::regex kChannel(R"(via NET/([^/\s][^/]*)/)");
  static const std::regex kBare(R"((?:^|\s)NCCL (INFO|WARN) (.*)$)");
  NcclLog log;
  std::map<std::string, size_t> index;
  int n = 0;
  for (auto line_sv : split_lines(text)) {
    ++n;
    if (line_sv.find("NCCL ") == std::string_view::npos) continue;
    std::string line(line_sv);
    std::smatch m;
    std::string host, pid, msg;
    if (std::regex_search(line, m, kPrefix)) {
      host = m[1].str();
      pid = m[2].str();
      msg = m[5].str();
    } else if (std::regex_search(line, m, kBare)) {
      host = "?";  // no prefix: which process is not known
      pid = "?";
      msg = m[2].str();
      ++log.unprefixed_lines;
    } else {
      continue;
    }
    ++log.nccl_lines;
    auto [it, fresh] = index.emplace(host + ":" + pid, log.processes.size());
    if (fresh) {
      NcclProcess p;
      p.host = host;
      p.pid = pid;
      p.first_line = n;
      log.processes.push_back(std::move(p));
    }
    NcclProcess& p = log.processes[it->second];
    std::smatch mm;
    if (std::regex_search(msg, mm, kNetwork)) {
      // The first "Using network" decides the transport; keep the first bad one.
      if (!p.network || is_libfabric(*p.network)) {
        p.network = mm[1].str();
        p.network_line = n;
      }
    } else if (!p.channel_network && msg.starts_with("Channel ") && std::regex_search(msg, mm, kChannel)) {
      p.channel_network = mm[1].str();
      p.channel_line = n;
    } else if (std::regex_search(msg, mm, kProvider)) {
      p.provider = mm[1].str();
      if (mm[2].matched) p.fabric = mm[2].str();
      // A count no int holds is no count NCCL printed: left unknown.
      if (auto v = mm[3].matched ? to_int(mm[3].str()) : std::nullopt;
          v && *v <= std::numeric_limits<int>::max())
        p.nics = static_cast<int>(*v);
      p.provider_line = n;
    }
  }
  return log;
}

}  // namespace trainimg::host
