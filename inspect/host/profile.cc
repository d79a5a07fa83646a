// SPDX-License-Identifier: GPL-3.0-or-later
#include <variant>

#include "common/error.h"
#include "common/json_text.h"
#include "common/source_file.h"
#include "inspect/host.h"

namespace trainimg::host {

namespace {

using Json = nlohmann::ordered_json;
using StrField = std::optional<std::string> HostProfile::*;
using IntField = std::optional<int> HostProfile::*;
using BoolField = std::optional<bool> HostProfile::*;
using ListField = std::vector<std::string> HostProfile::*;

struct FactField {
  const char* name;
  std::variant<StrField, IntField, BoolField, ListField> member;
};

// One table drives serialization, parsing, diff rows and docs/host.md: a new
// fact is one line here.
const FactField kFacts[] = {
    {"kernel", &HostProfile::kernel},
    {"driver_version", &HostProfile::driver_version},
    {"cuda_driver_version", &HostProfile::cuda_driver_version},
    {"gpu_model", &HostProfile::gpu_model},
    {"gpu_count", &HostProfile::gpu_count},
    {"fabric_manager", &HostProfile::fabric_manager},
    {"efa_driver_version", &HostProfile::efa_driver_version},
    {"efa_installer_version", &HostProfile::efa_installer_version},
    {"libfabric_version", &HostProfile::libfabric_version},
    {"ofi_nccl_version", &HostProfile::ofi_nccl_version},
    {"openmpi4_version", &HostProfile::openmpi4_version},
    {"openmpi5_version", &HostProfile::openmpi5_version},
    {"pmix_version", &HostProfile::pmix_version},
    {"efa_device_count", &HostProfile::efa_device_count},
    {"infiniband_devices", &HostProfile::infiniband_devices},
    {"fi_info_domain_count", &HostProfile::fi_info_domain_count},
    {"fi_info_domains", &HostProfile::fi_info_domains},
    {"efa_module_loaded", &HostProfile::efa_module_loaded},
    {"gdrdrv_loaded", &HostProfile::gdrdrv_loaded},
    {"dev_gdrdrv", &HostProfile::dev_gdrdrv},
    {"memlock", &HostProfile::memlock},
    {"nvme_mounted", &HostProfile::nvme_mounted},
    {"nvme_size", &HostProfile::nvme_size},
    {"held_packages", &HostProfile::held_packages},
    {"kernel_held", &HostProfile::kernel_held},
    {"lustre_version", &HostProfile::lustre_version},
    {"lustre_module_loaded", &HostProfile::lustre_module_loaded},
    {"lustre_mounted", &HostProfile::lustre_mounted},
    {"nvidia_fs_loaded", &HostProfile::nvidia_fs_loaded},
    {"nvidia_fs_version", &HostProfile::nvidia_fs_version},
    {"lnet_efa_count", &HostProfile::lnet_efa_count},
    {"lnet_efa_up", &HostProfile::lnet_efa_up},
    {"efa_fsx_service", &HostProfile::efa_fsx_service},
};

template <class T>
Json opt_json(const std::optional<T>& v) {
  return v ? Json(*v) : Json(nullptr);
}

Json fact_json(const HostProfile& p, const FactField& f) {
  return std::visit(
      [&p](auto m) -> Json {
        using M = decltype(m);
        if constexpr (std::is_same_v<M, ListField>)
          return Json(p.*m);
        else
          return opt_json(p.*m);
      },
      f.member);
}

// Finds where `"key":` occurs for a path of keys, each searched after the
// previous one. nlohmann's DOM keeps no positions; this is exact for profiles
// trainimg wrote and a good pointer for hand-edited ones.
size_t locate(std::string_view text, const std::vector<std::string>& keys) {
  size_t pos = 0;
  size_t found = std::string_view::npos;
  for (const auto& k : keys) {
    std::string quoted = "\"" + k + "\"";
    size_t at = text.find(quoted, pos);
    while (at != std::string_view::npos) {
      size_t after = at + quoted.size();
      while (after < text.size() &&
             (text[after] == ' ' || text[after] == '\t' || text[after] == '\n' || text[after] == '\r'))
        ++after;
      if (after < text.size() && text[after] == ':') break;
      at = text.find(quoted, at + 1);
    }
    if (at == std::string_view::npos) return found;
    found = at;
    pos = at + quoted.size();
  }
  return found;
}

class Reader {
 public:
  Reader(std::string_view text, std::string file) : src_(file, std::string(text)), file_(std::move(file)) {}

  [[noreturn]] void fail(const std::vector<std::string>& keys, const std::string& message,
                         const std::string& hint = {}) const {
    Diagnostic d;
    d.file = file_;
    d.message = message;
    d.hint = hint;
    size_t at = locate(src_.text(), keys);
    if (at != std::string_view::npos) {
      auto lc = src_.line_col(at);
      d.line = lc.line;
      d.column = lc.column;
      d.length = static_cast<int>(keys.back().size() + 2);
      d.source_line = std::string(src_.line_text(lc.line));
    }
    throw Error(d);
  }

  Json parse() const { return parse_json_text<Json>(src_, "invalid JSON"); }

  template <class T>
  std::optional<T> get(const Json& obj, const std::vector<std::string>& path, const char* type) const {
    auto it = obj.find(path.back());
    if (it == obj.end() || it->is_null()) return std::nullopt;
    bool ok;
    if constexpr (std::is_same_v<T, std::string>)
      ok = it->is_string();
    else if constexpr (std::is_same_v<T, bool>)
      ok = it->is_boolean();
    else if constexpr (std::is_same_v<T, int>)
      ok = it->is_number_integer();
    else
      ok = it->is_number();
    if (!ok) fail(path, "\"" + path.back() + "\" must be " + type + ", not " + it->type_name());
    return it->template get<T>();
  }

  std::vector<std::string> get_list(const Json& obj, const std::vector<std::string>& path) const {
    std::vector<std::string> out;
    auto it = obj.find(path.back());
    if (it == obj.end() || it->is_null()) return out;
    if (!it->is_array())
      fail(path, "\"" + path.back() + "\" must be an array of strings, not " + it->type_name());
    for (const auto& v : *it) {
      if (!v.is_string())
        fail(path, "\"" + path.back() + "\" must hold only strings, found " + v.type_name());
      out.push_back(v.get<std::string>());
    }
    return out;
  }

  const Json& object(const Json& parent, const std::vector<std::string>& path) const {
    static const Json kEmpty = Json::object();
    auto it = parent.find(path.back());
    if (it == parent.end() || it->is_null()) return kEmpty;
    if (!it->is_object()) fail(path, "\"" + path.back() + "\" must be an object, not " + it->type_name());
    return *it;
  }

 private:
  SourceFile src_;
  std::string file_;
};

}  // namespace

std::string_view to_string(ProbeStatus s) {
  switch (s) {
    case ProbeStatus::Ok: return "ok";
    case ProbeStatus::Absent: return "absent";
    case ProbeStatus::Failed: return "failed";
    case ProbeStatus::Timeout: return "timeout";
  }
  return "failed";
}

std::optional<ProbeStatus> parse_probe_status(std::string_view s) {
  for (auto st : {ProbeStatus::Ok, ProbeStatus::Absent, ProbeStatus::Failed, ProbeStatus::Timeout})
    if (to_string(st) == s) return st;
  return std::nullopt;
}

nlohmann::ordered_json to_json(const HostProfile& p) {
  Json j;
  j["schema"] = std::string(kProfileSchema);
  j["hostname"] = p.hostname;
  j["captured_at"] = p.captured_at;
  j["source"] = p.source;
  j["boot_id"] = p.boot_id;
  Json facts = Json::object();
  for (const auto& f : kFacts) facts[f.name] = fact_json(p, f);
  Json gpus = Json::array();
  for (const auto& g : p.gpus)
    gpus.push_back({{"index", g.index}, {"name", g.name}, {"driver_version", g.driver_version}});
  facts["gpus"] = std::move(gpus);
  j["facts"] = std::move(facts);
  Json probes = Json::object();
  for (const auto& [id, r] : p.probes) {
    Json pr;
    pr["command"] = r.command;
    pr["status"] = std::string(to_string(r.status));
    pr["exit_code"] = r.exit_code;
    pr["seconds"] = r.seconds;
    pr["parsed"] = r.parsed.is_null() ? Json::object() : r.parsed;
    pr["output"] = r.output;
    pr["error"] = r.error;
    probes[id] = std::move(pr);
  }
  j["probes"] = std::move(probes);
  return j;
}

std::string serialize(const HostProfile& p) {
  // Raw probe output may hold bytes that are not UTF-8; replace, never throw.
  return to_json(p).dump(2, ' ', false, Json::error_handler_t::replace) + "\n";
}

HostProfile parse_profile(std::string_view text, const std::string& file) {
  Reader rd(text, file);
  Json j = rd.parse();
  if (!j.is_object()) {
    Diagnostic d;
    d.file = file;
    d.line = 1;
    d.column = 1;
    d.message = std::string("a host profile must be a JSON object, not ") + j.type_name();
    throw Error(d);
  }
  auto schema = rd.get<std::string>(j, {"schema"}, "a string");
  if (!schema)
    throw Error(file,
                "not a host profile: no \"schema\" field (expected \"" + std::string(kProfileSchema) + "\")",
                "write one with: trainimg host capture -o HOST.json");
  if (*schema != kProfileSchema)
    rd.fail({"schema"},
            "unsupported profile schema \"" + *schema + "\" (this trainimg reads \"" +
                std::string(kProfileSchema) + "\")",
            "re-capture the profile with this trainimg version");
  HostProfile p;
  p.hostname = rd.get<std::string>(j, {"hostname"}, "a string").value_or("");
  p.captured_at = rd.get<std::string>(j, {"captured_at"}, "a string").value_or("");
  p.source = rd.get<std::string>(j, {"source"}, "a string").value_or("");
  p.boot_id = rd.get<std::string>(j, {"boot_id"}, "a string").value_or("");
  const Json& facts = rd.object(j, {"facts"});
  for (const auto& f : kFacts) {
    std::vector<std::string> path = {"facts", f.name};
    std::visit(
        [&](auto m) {
          using M = decltype(m);
          if constexpr (std::is_same_v<M, StrField>)
            p.*m = rd.get<std::string>(facts, path, "a string");
          else if constexpr (std::is_same_v<M, IntField>)
            p.*m = rd.get<int>(facts, path, "an integer");
          else if constexpr (std::is_same_v<M, BoolField>)
            p.*m = rd.get<bool>(facts, path, "true or false");
          else
            p.*m = rd.get_list(facts, path);
        },
        f.member);
  }
  if (auto it = facts.find("gpus"); it != facts.end() && !it->is_null()) {
    if (!it->is_array())
      rd.fail({"facts", "gpus"}, std::string("\"gpus\" must be an array, not ") + it->type_name());
    for (const auto& g : *it) {
      if (!g.is_object()) rd.fail({"facts", "gpus"}, "each entry of \"gpus\" must be an object");
      Gpu gpu;
      gpu.index = rd.get<int>(g, {"facts", "gpus", "index"}, "an integer").value_or(0);
      gpu.name = rd.get<std::string>(g, {"facts", "gpus", "name"}, "a string").value_or("");
      gpu.driver_version =
          rd.get<std::string>(g, {"facts", "gpus", "driver_version"}, "a string").value_or("");
      p.gpus.push_back(std::move(gpu));
    }
  }
  const Json& probes = rd.object(j, {"probes"});
  for (const auto& [id, pr] : probes.items()) {
    if (!pr.is_object()) rd.fail({"probes", id}, "probe \"" + id + "\" must be an object");
    ProbeRecord r;
    std::vector<std::string> base = {"probes", id};
    auto at = [&base](const char* k) {
      auto v = base;
      v.push_back(k);
      return v;
    };
    r.command = rd.get<std::string>(pr, at("command"), "a string").value_or("");
    auto st = rd.get<std::string>(pr, at("status"), "a string").value_or("absent");
    auto status = parse_probe_status(st);
    if (!status) rd.fail(at("status"), "unknown probe status \"" + st + "\" (ok, absent, failed, timeout)");
    r.status = *status;
    r.exit_code = rd.get<int>(pr, at("exit_code"), "an integer").value_or(0);
    r.seconds = rd.get<double>(pr, at("seconds"), "a number").value_or(0);
    r.output = rd.get<std::string>(pr, at("output"), "a string").value_or("");
    r.error = rd.get<std::string>(pr, at("error"), "a string").value_or("");
    if (auto it = pr.find("parsed"); it != pr.end()) r.parsed = *it;
    p.probes[id] = std::move(r);
  }
  return p;
}

HostProfile read_profile(const std::string& path) {
  SourceFile f = SourceFile::read(path);
  return parse_profile(f.text(), path);
}

std::vector<std::pair<std::string, std::string>> fact_rows(const HostProfile& p) {
  std::vector<std::pair<std::string, std::string>> rows;
  for (const auto& f : kFacts) {
    Json v = fact_json(p, f);
    if (v.is_null() || (v.is_array() && v.empty())) continue;
    if (v.is_array()) {
      std::string s;
      for (const auto& e : v) s += (s.empty() ? "" : ",") + e.get<std::string>();
      rows.emplace_back(f.name, s);
    } else if (v.is_string()) {
      rows.emplace_back(f.name, v.get<std::string>());
    } else {
      rows.emplace_back(f.name, v.dump());
    }
  }
  return rows;
}

}  // namespace trainimg::host
