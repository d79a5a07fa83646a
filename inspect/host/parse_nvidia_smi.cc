// SPDX-License-Identifier: GPL-3.0-or-later
// nvidia-smi outputs (seed 000 "Host validation", first command).
#include <cctype>

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

namespace {
// A --query-gpu field name as the csv header prints it: "index",
// "driver_version", "memory.total [MiB]".
bool is_field_name(std::string_view col) {
  size_t unit = col.find(" [");
  if (unit != std::string_view::npos) {
    if (!col.ends_with(']')) return false;
    col = col.substr(0, unit);
  }
  return !col.empty() &&
         col.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789_.") == std::string_view::npos &&
         !std::isdigit(static_cast<unsigned char>(col.front()));
}
}  // namespace

std::vector<Gpu> parse_nvidia_smi_csv(std::string_view text, const std::string& file) {
  std::vector<Gpu> gpus;
  // Without a header (noheader) the columns are the documented query's.
  size_t index_col = 0, name_col = 1, driver_col = 2, width = 3;
  std::string expected = "3 columns (index, name, driver_version)";
  int n = 0;
  bool seen_line = false;
  for (auto full_line : split_lines(text)) {
    ++n;
    std::string_view line = trim(strip_label(full_line));
    if (line.empty()) continue;
    // nvidia-smi's whole answer when no GPU is visible (exit 6).
    if (line == "No devices were found") continue;
    auto cols = split_csv(line);
    const bool first = !seen_line;
    seen_line = true;
    bool all_names = true;
    for (auto c : cols) all_names = all_names && is_field_name(c);
    if (first && (cols[0] == "index" || all_names)) {  // the csv header
      if (!all_names)
        fail_at(file, n, 1, full_line, "expected " + expected + ", found " + std::to_string(cols.size()),
                "capture with: nvidia-smi --query-gpu=index,name,driver_version --format=csv");
      std::optional<size_t> i, nm, d;
      for (size_t k = 0; k < cols.size(); ++k) {
        if (cols[k] == "index") i = k;
        if (cols[k] == "name") nm = k;
        if (cols[k] == "driver_version") d = k;
      }
      for (auto [pos, what] : {std::pair{i, "index"}, {nm, "name"}, {d, "driver_version"}})
        if (!pos) fail_at(file, n, 1, full_line, std::string("the header has no ") + what + " column");
      index_col = *i;
      name_col = *nm;
      driver_col = *d;
      width = cols.size();
      if (width != 3) expected = std::to_string(width) + " columns (as the header)";
      continue;
    }
    if (cols.size() == 1 && !to_int(cols[0]))  // not a row: nvidia-smi says what went wrong
      fail_at(file, n, 1, full_line, "nvidia-smi printed \"" + std::string(line) + "\" instead of a GPU row");
    if (cols.size() != width)
      fail_at(file, n, 1, full_line, "expected " + expected + ", found " + std::to_string(cols.size()),
              "capture with: nvidia-smi --query-gpu=index,name,driver_version --format=csv");
    auto idx = to_int(cols[index_col]);
    if (!idx)
      fail_at(file, n, 1, full_line, "GPU index \"" + std::string(cols[index_col]) + "\" is not a number");
    if (cols[name_col].empty() || cols[driver_col].empty())
      fail_at(file, n, 1, full_line, "empty GPU name or driver version (truncated?)");
    gpus.push_back({static_cast<int>(*idx), std::string(cols[name_col]), std::string(cols[driver_col])});
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
  auto lines = split_lines(text);
  for (auto line : lines) {
    if (line.substr(0, 8) != "version:") continue;
    auto v = trim(line.substr(8));
    if (!v.empty()) return std::string(v);
  }
  // `cat /sys/module/efa/version` or `modinfo -F version efa`: the bare version.
  auto only = first_line(text);
  if (only && std::isdigit(static_cast<unsigned char>(only->front())) &&
      only->find_first_of(" \t:") == std::string::npos)
    return only;
  return std::nullopt;
}

}  // namespace trainimg::host
