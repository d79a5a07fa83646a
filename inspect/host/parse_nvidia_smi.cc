// SPDX-License-Identifier: GPL-3.0-or-later
// nvidia-smi outputs (seed 000 "Host validation", first command).
#include "inspect/host/parsers.h"

namespace trainimg::host {

namespace {
std::vector<std::string_view> split_csv(std::string_view line) {
  std::vector<std::string_view> out;
  size_t pos = 0;
  while (true) {
    size_t comma = line.find(',', pos);
    out.push_back(trim(line.substr(pos, comma == std::string_view::npos ? std::string_view::npos : comma - pos)));
    if (comma == std::string_view::npos) break;
    pos = comma + 1;
  }
  return out;
}
}  // namespace

std::vector<Gpu> parse_nvidia_smi_csv(std::string_view text, const std::string& file) {
  std::vector<Gpu> gpus;
  int n = 0;
  for (auto line : split_lines(text)) {
    ++n;
    if (trim(line).empty()) continue;
    auto cols = split_csv(line);
    if (cols.size() == 3 && cols[0] == "index") continue;  // the --format=csv header
    if (cols.size() != 3)
      fail_at(file, n, 1, line,
              "expected 3 columns (index, name, driver_version), found " + std::to_string(cols.size()),
              "capture with: nvidia-smi --query-gpu=index,name,driver_version --format=csv");
    auto idx = to_int(cols[0]);
    if (!idx) fail_at(file, n, 1, line, "GPU index \"" + std::string(cols[0]) + "\" is not a number");
    if (cols[1].empty() || cols[2].empty()) fail_at(file, n, 1, line, "empty GPU name or driver version (truncated?)");
    gpus.push_back({static_cast<int>(*idx), std::string(cols[1]), std::string(cols[2])});
  }
  return gpus;
}

std::optional<std::string> parse_nvidia_smi_cuda_version(std::string_view text) {
  for (std::string_view key : {"CUDA Version:", "CUDA Version", "CUDA Driver Version:"}) {
    size_t at = text.find(key);
    if (at == std::string_view::npos) continue;
    std::string_view rest = text.substr(at + key.size());
    while (!rest.empty() && (rest.front() == ' ' || rest.front() == ':')) rest.remove_prefix(1);
    size_t end = 0;
    while (end < rest.size() && (std::isdigit(static_cast<unsigned char>(rest[end])) || rest[end] == '.')) ++end;
    if (end > 0) return std::string(rest.substr(0, end));
  }
  return std::nullopt;
}

std::optional<std::string> parse_modinfo_version(std::string_view text) {
  for (auto line : split_lines(text)) {
    if (line.substr(0, 8) != "version:") continue;
    auto v = trim(line.substr(8));
    if (!v.empty()) return std::string(v);
  }
  return std::nullopt;
}

}  // namespace trainimg::host
