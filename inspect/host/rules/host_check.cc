// SPDX-License-Identifier: GPL-3.0-or-later
// The shared parts of the host rules: context helpers, --expect parsing and
// the lists derived from rules.def.
#include "common/error.h"
#include "inspect/host/parsers.h"
#include "inspect/host/rules.h"

namespace trainimg::host {

std::string HostContext::probe_state(const std::string& id) const {
  auto it = profile.probes.find(id);
  if (it == profile.probes.end()) return "not captured";
  const auto& r = it->second;
  std::string s(to_string(r.status));
  if (r.parsed.is_object() && r.parsed.contains("parse_error"))
    return "unreadable output: " + r.parsed["parse_error"].get<std::string>();
  std::string why = std::string(trim(first_line(r.error).value_or("")));
  return why.empty() ? s : s + ": " + why;
}

Diagnostic line_finding(const RuleInfo& rule, std::string message, const std::string& file,
                        const std::vector<std::string_view>& lines, int line) {
  Diagnostic d = Finding(rule, std::move(message)).in(file);
  d.line = line;
  if (line > 0 && line <= static_cast<int>(lines.size())) {
    d.column = 1;
    d.source_line = std::string(lines[line - 1]);
  }
  return d;
}

bool HostContext::probe_ok(const std::string& id) const {
  auto it = profile.probes.find(id);
  return it != profile.probes.end() && it->second.status == ProbeStatus::Ok &&
         !(it->second.parsed.is_object() && it->second.parsed.contains("parse_error"));
}

bool HostContext::cannot_tell(const RuleInfo& rule, const std::string& id) const {
  auto it = profile.probes.find(id);
  bool absent = it == profile.probes.end() || it->second.status == ProbeStatus::Absent;
  if (!absent || expect.strict || expect.named.contains(rule.id)) return false;
  add(Finding(rule, "cannot tell: " + probe_state(id) +
                        " (an input that was not captured is not judged; --strict or --expect " +
                        "naming this check makes it a failure)")
          .in(file)
          .severity(Severity::Info));
  return true;
}

bool HostContext::lustre_in_use() const {
  if (expect.lustre) return *expect.lustre;
  return profile.lustre_mounted.value_or(false) || profile.lustre_module_loaded.value_or(false) ||
         profile.lnet_efa_count.value_or(0) > 0 || profile.efa_fsx_service.value_or("") == "active";
}

bool HostContext::gds_in_use() const {
  if (expect.gds) return *expect.gds;
  if (expect.nvidia_fs_min) return true;
  return profile.nvidia_fs_loaded.value_or(false) && lustre_in_use();
}

void HostContext::drift(const RuleInfo& rule, const std::string& what, const std::optional<std::string>& mine,
                        const std::optional<std::string>& base) const {
  if (!baseline) return;
  std::string ref = baseline->hostname.empty() ? baseline_file : baseline->hostname;
  if (!mine || !base) {
    if (mine != base)
      note(rule.id + ": " + what + " is " + mine.value_or("unknown") + " here and " +
           base.value_or("unknown") + " on the baseline " + ref + "; not compared");
    return;
  }
  if (*mine != *base)
    add(Finding(rule, what + " " + *mine + " differs from the baseline node " + ref + " (" + *base +
                          "): every node must share one environment")
            .in(file));
}

HostExpectations parse_expectations(std::string_view spec) {
  HostExpectations e;
  size_t pos = 0;
  auto fail = [&spec](size_t at, const std::string& msg) {
    fail_at("--expect", 1, static_cast<int>(at) + 1, spec, msg,
            "keys: gpus=N, efas=N, gpu-model=NAME, efa-driver>=V, efa-driver=V, kernel=K, nvidia-fs>=V, "
            "lustre=yes|no, gds=yes|no, lnet-efas=N, fabric-manager=yes, gdrcopy=yes, nvme-mount=yes, "
            "memlock=yes");
  };
  while (pos < spec.size()) {
    size_t comma = spec.find(',', pos);
    std::string_view item =
        spec.substr(pos, comma == std::string_view::npos ? std::string_view::npos : comma - pos);
    size_t op_at = item.find_first_of("=>");
    if (op_at == std::string_view::npos) fail(pos, "\"" + std::string(item) + "\" has no '=' or '>='");
    std::string key(trim(item.substr(0, op_at)));
    bool ge = item.substr(op_at, 2) == ">=";
    if (!ge && item[op_at] != '=') fail(pos + op_at, "expected '=' or '>=' after \"" + key + "\"");
    std::string value(trim(item.substr(op_at + (ge ? 2 : 1))));
    size_t value_at = pos + op_at + (ge ? 2 : 1);
    if (value.empty()) fail(value_at, "\"" + key + "\" has no value");
    auto number = [&]() {
      auto n = to_int(value);
      if (!n || *n < 0) fail(value_at, "\"" + key + "\" needs a count, not \"" + value + "\"");
      return static_cast<int>(n.value_or(0));
    };
    auto yes_no = [&]() {
      if (value == "yes" || value == "true") return true;
      if (value == "no" || value == "false") return false;
      fail(value_at, "\"" + key + "\" is yes or no, not \"" + value + "\"");
      return false;  // not reached: fail throws
    };
    auto only_eq = [&]() {
      if (ge) fail(pos + op_at, "\"" + key + "\" takes '=', not '>='");
    };
    auto name = [&e](std::initializer_list<const char*> rules) {
      for (const char* r : rules) e.named.insert(r);
    };
    if (key == "gpus")
      only_eq(), e.gpus = number(), name({"gpu-count"});
    else if (key == "efas")
      only_eq(), e.efas = number(), name({"efa-device-count"});
    else if (key == "lnet-efas")
      only_eq(), e.lnet_efas = number(), name({"lnet-efa"});
    else if (key == "gpu-model")
      only_eq(), e.gpu_model = value, name({"gpu-count"});
    else if (key == "kernel")
      only_eq(), e.kernel = value, name({"kernel-changed"});
    else if (key == "lustre") {
      only_eq(), e.lustre = yes_no();
      if (*e.lustre) name({"lustre-client", "lnet-efa"});
    } else if (key == "gds") {
      only_eq(), e.gds = yes_no();
      if (*e.gds) name({"nvidia-fs"});
    } else if (key == "efa-driver")
      (ge ? e.efa_driver_min : e.efa_driver) = value, name({"efa-driver"});
    else if (key == "nvidia-fs") {
      if (!ge) fail(pos + op_at, "\"nvidia-fs\" takes '>=' (a minimum version)");
      e.nvidia_fs_min = value;
      name({"nvidia-fs"});
    } else if (key == "fabric-manager" || key == "gdrcopy" || key == "nvme-mount" || key == "memlock") {
      only_eq();
      if (yes_no()) e.named.insert(key);
    } else {
      fail(pos, "unknown expectation \"" + key + "\"");
    }
    if (comma == std::string_view::npos) break;
    pos = comma + 1;
  }
  return e;
}

const std::vector<const HostRule*>& all_host_rules() {
  static const std::vector<const HostRule*> kRules = {
#define HOST_RULE(name) &name,
#include "inspect/host/rules/rules.def"
  };
  return kRules;
}

std::vector<RuleInfo> profile_rules() {
  std::vector<RuleInfo> out;
  for (const auto* r : all_host_rules()) out.push_back(r->info);
  return out;
}

const std::vector<const TextRule*>& all_text_rules() {
  static const std::vector<const TextRule*> kRules = {
#define TEXT_RULE(name) &name,
#include "inspect/host/rules/rules.def"
  };
  return kRules;
}

void run_text_rules(TextSource source, const TextInput& in, std::vector<RuleInfo>& rules, CheckOutput& out) {
  for (const auto* r : all_text_rules()) {
    if (r->source != source) continue;
    rules.push_back(r->info);
    r->check(r->info, in, out);
  }
}

std::vector<RuleInfo> host_rules() {
  auto r = profile_rules();
  for (const auto* t : all_text_rules()) r.push_back(t->info);
  return r;
}

HostCheckResult check_host(const HostProfile& p, const HostExpectations& e, const HostProfile* baseline,
                           const std::string& file, const std::string& baseline_file) {
  HostCheckResult out;
  HostContext c{p, e, baseline, file, baseline_file, &out.findings, &out.notes};
  for (const auto* r : all_host_rules()) r->check(r->info, c);
  return out;
}

}  // namespace trainimg::host
