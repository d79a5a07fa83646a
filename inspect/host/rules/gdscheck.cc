// SPDX-License-Identifier: GPL-3.0-or-later
// gdscheck: seed 004 §3 "you only need to check these 5 lines": nvidia_fs
// version, DDN EXAScaler includes nvfs, every GPU supports GDS, IOMMU
// disabled, last line `Platform verification succeeded`.
#include "common/version.h"
#include "inspect/host/parsers.h"
#include "inspect/host/rules.h"

namespace trainimg::host {

namespace {

void check(const RuleInfo& rule, const TextInput& in, CheckOutput& out) {
  if (!in.gdscheck) return;  // --live: gdscheck did not run (its finding says why)
  const GdscheckReport& g = *in.gdscheck;
  const std::string& file = in.file;
  const std::string& min_nvidia_fs = in.min_nvidia_fs;
  auto lines = split_lines(in.text);
  auto at = [&](int line, std::string msg) {
    out.findings.push_back(line_finding(rule, std::move(msg), file, lines, line));
  };
  // ① gdscheck prints two parts ("2.30"): compare with the minimum cut to two.
  if (!g.nvidia_fs_version)
    at(0, "① no `nvidia_fs version:` line (nvidia-fs not loaded, or the output is cut)");
  else {
    std::string min2 = min_nvidia_fs;
    size_t dots = std::count(g.nvidia_fs_version->begin(), g.nvidia_fs_version->end(), '.');
    if (dots == 1) {
      size_t second = min2.find('.', min2.find('.') + 1);
      if (second != std::string::npos) min2 = min2.substr(0, second);
    }
    if (compare_versions(*g.nvidia_fs_version, min2) < 0)
      at(g.version_line,
         "① nvidia_fs version " + *g.nvidia_fs_version + " is below the minimum " + min_nvidia_fs);
  }
  // ②
  if (!g.exascaler)
    at(0, "② no `DDN EXAScaler` line (the output is cut?)");
  else {
    bool nvfs = false;
    size_t pos = 0;
    std::string_view v = *g.exascaler;
    while (pos <= v.size()) {
      size_t comma = v.find(',', pos);
      if (trim(v.substr(pos, comma == std::string_view::npos ? std::string_view::npos : comma - pos)) ==
          "nvfs")
        nvfs = true;
      if (comma == std::string_view::npos) break;
      pos = comma + 1;
    }
    // gdscheck before the per-mode lists ("nvfs, compat") printed
    // Supported/Unsupported, Supported being the nvfs path (NVIDIA's GDS
    // tools read "DDN EXAScaler : Supported" so; a public GDS 1.14 guide
    // for p5e expects that line).
    if (trim(v) == "Supported") nvfs = true;
    if (!nvfs)
      at(g.exascaler_line, "② DDN EXAScaler (Lustre) is `" + *g.exascaler +
                               "` without nvfs: no GDS path for Lustre, only CPU compat mode");
  }
  // ③
  if (g.gpus.empty()) at(0, "③ no `GPU index N … supports GDS` line");
  for (const auto& gpu : g.gpus)
    if (!gpu.supports_gds)
      at(gpu.line, "③ GPU index " + std::to_string(gpu.index) + " does not report `supports GDS`");
  // ④
  if (!g.iommu)
    at(0, "④ no `IOMMU:` line (the output is cut?)");
  else if (*g.iommu != "disabled")
    at(g.iommu_line, "④ IOMMU: " + *g.iommu + ", expected disabled");
  // ⑤
  if (g.last_line != "Platform verification succeeded")
    at(g.last_line_no, "⑤ the last line is `" + g.last_line + "`, not `Platform verification succeeded`");
  out.text_facts.emplace_back("gdscheck nvidia_fs version", g.nvidia_fs_version.value_or("?"));
  out.text_facts.emplace_back("gdscheck DDN EXAScaler", g.exascaler.value_or("?"));
  int ok = 0;
  for (const auto& gpu : g.gpus) ok += gpu.supports_gds;
  out.text_facts.emplace_back("gdscheck GPUs supporting GDS",
                              std::to_string(ok) + "/" + std::to_string(g.gpus.size()));
  out.text_facts.emplace_back("gdscheck IOMMU", g.iommu.value_or("?"));
  out.text_facts.emplace_back("gdscheck last line", g.last_line);
}

}  // namespace

const TextRule kGdscheck{
    {"gdscheck", Severity::Error,
     "a `gdscheck -p` line fails: ① nvidia_fs version < minimum (compared on two parts, as gdscheck prints "
     "them), ② `DDN EXAScaler` neither `nvfs` nor (older gdscheck) `Supported`, ③ a GPU without `supports "
     "GDS`, ④ `IOMMU:` not `disabled`, ⑤ "
     "last line not `Platform verification succeeded`",
     "EXAScaler without nvfs: load nvidia-fs, mount Lustre, run setup.sh --optimized-for-gds; a "
     "GPU without GDS or a failed verification: share the full output with AWS",
     "seed 004 §3 GDS platform inspection (gdscheck -p)", "host", "docs/host.md#rules"},
    TextSource::Gdscheck,
    check};

void check_gdscheck(const GdscheckReport& g, std::string_view text, const std::string& file,
                    const std::string& min_nvidia_fs, CheckOutput& out) {
  TextInput in;
  in.file = file;
  in.text = text;
  in.gdscheck = &g;
  in.min_nvidia_fs = min_nvidia_fs;
  kGdscheck.check(kGdscheck.info, in, out);
}

}  // namespace trainimg::host
