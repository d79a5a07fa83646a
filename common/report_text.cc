// SPDX-License-Identifier: GPL-3.0-or-later
#include <algorithm>

#include "common/report.h"

namespace trainimg {

namespace {
const char* kBold = "\033[1m";
const char* kReset = "\033[0m";
const char* color_of(Severity s) {
  switch (s) {
    case Severity::Error: return "\033[1;31m";
    case Severity::Warning: return "\033[1;35m";
    case Severity::Info: return "\033[1;36m";
  }
  return "";
}
}  // namespace

std::string render_diagnostic(const Diagnostic& d, bool color) {
  std::string out;
  std::string loc = d.location();
  if (!d.path.empty() && loc.empty()) loc = d.path;
  if (color) out += kBold;
  if (!loc.empty()) out += loc + ": ";
  if (color) out += std::string(kReset) + color_of(d.severity);
  out += std::string(to_string(d.severity)) + ":";
  if (color) out += std::string(kReset) + kBold;
  out += " " + d.message;
  if (!d.rule_id.empty()) out += " [" + d.rule_id + "]";
  if (color) out += kReset;
  out += "\n";
  if (!d.path.empty() && loc != d.path) {
    out += "  in image: " + d.path;
    if (!d.layer.empty()) out += " (layer " + d.layer + ")";
    out += "\n";
  } else if (!d.layer.empty()) {
    out += "  layer: " + d.layer + "\n";
  }
  if (!d.source_line.empty() && d.column > 0) {
    out += d.source_line + "\n";
    std::string caret;
    // Keep tabs so the caret lines up under the same columns.
    for (int i = 0; i + 1 < d.column && i < static_cast<int>(d.source_line.size()); ++i)
      caret += d.source_line[i] == '\t' ? '\t' : ' ';
    caret += '^';
    for (int i = 1; i < d.length; ++i) caret += '~';
    if (color)
      out += std::string("\033[1;32m") + caret + kReset + "\n";
    else
      out += caret + "\n";
  }
  for (const auto& x : d.related)
    out += "  related: " + x.file + ":" + std::to_string(x.line) + ":" + std::to_string(x.column) + ": " +
           x.message + "\n";
  if (!d.hint.empty()) out += "hint: " + d.hint + "\n";
  return out;
}

std::string render_text(const Report& r, const TextOptions& opt) {
  std::string out;
  if (!r.text_facts.empty()) {
    size_t w = 0;
    for (const auto& [k, v] : r.text_facts) w = std::max(w, k.size());
    for (const auto& [k, v] : r.text_facts) out += k + std::string(w - k.size() + 2, ' ') + v + "\n";
    out += "\n";
  }
  // Remarks are not findings (the summary line counts findings only).
  for (const auto& n : r.notes) out += "remark: " + n + "\n";
  if (!r.notes.empty()) out += "\n";
  std::vector<Diagnostic> sorted = r.findings;
  // Errors first, then by position (stable within a severity).
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const Diagnostic& a, const Diagnostic& b) { return a.severity > b.severity; });
  int counts[3] = {0, 0, 0};
  for (auto d : sorted) {
    if (d.source_line.empty() && opt.sources && d.line > 0) {
      auto it = opt.sources->find(d.file);
      if (it != opt.sources->end()) d.source_line = std::string(it->second->line_text(d.line));
    }
    out += render_diagnostic(d, opt.color);
    counts[static_cast<int>(d.severity)]++;
  }
  if (r.show_suppressed && !r.suppressed.empty()) {
    out += "suppressed:\n";
    for (const auto& s : r.suppressed) {
      const Diagnostic& d = s.finding;
      std::string loc = d.location().empty() ? d.path : d.location();
      out += "  " + (loc.empty() ? "" : loc + ": ") + std::string(to_string(d.severity)) + ": " + d.message +
             (d.rule_id.empty() ? "" : " [" + d.rule_id + "]") + "\n";
      out += "    by " + s.by + (s.where.empty() ? "" : " (" + s.where + ")") + ": " + s.reason + "\n";
    }
  }
  if (r.baseline) {
    int unchanged = 0;
    for (const auto& s : r.suppressed) unchanged += s.by == "baseline";
    out += "baseline " + r.baseline->file + ": " + std::to_string(r.findings.size()) + " new, " +
           std::to_string(unchanged) + " unchanged, " + std::to_string(r.baseline->absent.size()) +
           " absent\n";
  }
  auto plural = [](int n, const char* w) { return std::to_string(n) + " " + w + (n == 1 ? "" : "s"); };
  out += plural(counts[2], "error") + ", " + plural(counts[1], "warning") + ", " + plural(counts[0], "note") +
         "\n";
  return out;
}

}  // namespace trainimg
