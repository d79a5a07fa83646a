// SPDX-License-Identifier: GPL-3.0-or-later
// GDS inputs of seed 004: the `gdscheck -p` report, and the LNet checks of
// `gds check` (interface list and send/recv counters).
#include <algorithm>
#include <limits>
#include <regex>

#include "common/error.h"
#include "inspect/host/parsers.h"
#include "inspect/host/rules.h"

namespace trainimg::host {

GdscheckReport parse_gdscheck(std::string_view text) {
  static const std::regex kVersion(R"(nvidia_fs version:\s*(\S+)(?:\s+nvidia_fs minimum version:\s*(\S+))?)");
  static const std::regex kGpu(R"(GPU index\s+(\d+))");
  GdscheckReport g;
  int n = 0;
  for (auto sv : split_lines(text)) {
    ++n;
    std::string line(trim(sv));
    if (line.empty()) continue;
    g.last_line = line;
    g.last_line_no = n;
    std::smatch m;
    if (std::regex_search(line, m, kVersion)) {
      g.nvidia_fs_version = m[1].str();
      if (m[2].matched) g.nvidia_fs_min = m[2].str();
      g.version_line = n;
    } else if (line.starts_with("DDN EXAScaler")) {
      size_t colon = line.find(':');
      g.exascaler =
          std::string(trim(colon == std::string::npos ? "" : std::string_view(line).substr(colon + 1)));
      g.exascaler_line = n;
    } else if (auto idx = std::regex_search(line, m, kGpu) ? to_int(m[1].str()) : std::nullopt;
               idx && *idx <= std::numeric_limits<int>::max()) {  // an index no int holds is no GPU line
      GdscheckReport::GpuLine gl;
      gl.index = static_cast<int>(*idx);
      gl.supports_gds = line.find("supports GDS") != std::string::npos;
      gl.line = n;
      g.gpus.push_back(gl);
    } else if (line.starts_with("IOMMU:") || line.starts_with("IOMMU :")) {
      g.iommu = std::string(trim(std::string_view(line).substr(line.find(':') + 1)));
      g.iommu_line = n;
    } else if (line.starts_with("Cuda Driver Version Installed:")) {
      g.cuda_driver = std::string(trim(std::string_view(line).substr(30)));
    }
  }
  return g;
}

GdsMode parse_gds_mode(std::string_view s) {
  if (s == "gds-write") return GdsMode::GdsWrite;
  if (s == "gds-read") return GdsMode::GdsRead;
  if (s == "cpu") return GdsMode::Cpu;
  throw Error("--mode", "unknown mode \"" + std::string(s) + "\" (gds-write, gds-read, cpu)");
}

void check_lnet_interfaces(const std::vector<LnetNi>& nis, const std::string& file,
                           std::optional<int> expect_efas, CheckOutput& out) {
  const auto& rule = kLnetEfa.info;
  int count = 0, up = 0;
  for (const auto& ni : nis) {
    if (!ni.nid.ends_with("@efa")) continue;
    ++count;
    if (ni.status == "up")
      ++up;
    else {
      Diagnostic d =
          Finding(rule, "LNet interface " + ni.nid + " is `status: " + (ni.status.empty() ? "?" : ni.status) +
                            "`, expected up")
              .in(file);
      d.line = ni.line;
      out.findings.push_back(std::move(d));
    }
  }
  out.text_facts.emplace_back("LNet @efa interfaces",
                              std::to_string(count) + " (" + std::to_string(up) + " up)");
  if (count == 0)
    out.findings.push_back(
        Finding(rule, "no `nid: …@efa` entry: LNet is not configured for EFA, FSx traffic goes over TCP")
            .in(file));
  else if (expect_efas && count != *expect_efas)
    out.findings.push_back(Finding(rule, std::to_string(count) + " LNet @efa interfaces, expected " +
                                             std::to_string(*expect_efas))
                               .in(file));
}

void check_lnet_counters(const std::vector<LnetNi>& before, const std::vector<LnetNi>& after,
                         const std::string& after_file, std::optional<int> expect_efas, bool expect_traffic,
                         CheckOutput& out) {
  const auto& rule = kLnetEfa.info;
  // Seed 004 §4: keep-alives add a handful of messages; a 10 GiB gdsio run
  // adds thousands on the interfaces near the GPU.
  constexpr long long kTrafficMessages = 1000;
  if (before.size() != after.size()) {
    out.findings.push_back(Finding(rule, "the before and after counters list " +
                                             std::to_string(before.size()) + " and " +
                                             std::to_string(after.size()) + " interfaces")
                               .in(after_file));
    return;
  }
  int n = static_cast<int>(after.size());
  if (expect_efas && n != *expect_efas)
    out.findings.push_back(Finding(rule, std::to_string(n) + " send_count/recv_count pairs, expected " +
                                             std::to_string(*expect_efas) + " EFA interfaces")
                               .in(after_file));
  long long best = 0;
  for (int i = 0; i < n; ++i) {
    long long ds = after[i].send_count.value_or(0) - before[i].send_count.value_or(0);
    long long dr = after[i].recv_count.value_or(0) - before[i].recv_count.value_or(0);
    best = std::max(best, ds + dr);
    std::string name = after[i].nid.empty() ? "EFA interface " + std::to_string(i + 1) : after[i].nid;
    out.notes.push_back(name + ": send_count " + std::to_string(before[i].send_count.value_or(0)) + " → " +
                        std::to_string(after[i].send_count.value_or(0)) + " (+" + std::to_string(ds) +
                        "), recv_count " + std::to_string(before[i].recv_count.value_or(0)) + " → " +
                        std::to_string(after[i].recv_count.value_or(0)) + " (+" + std::to_string(dr) + ")");
  }
  if (expect_traffic && best < kTrafficMessages)
    out.findings.push_back(
        Finding(rule, "no EFA interface carried FSx traffic (largest send+recv increase +" +
                          std::to_string(best) + " messages, < " + std::to_string(kTrafficMessages) +
                          "): FSx traffic did not flow over EFA")
            .in(after_file));
}

}  // namespace trainimg::host
