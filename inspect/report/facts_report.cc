// SPDX-License-Identifier: GPL-3.0-or-later
// The facts of trainimg.inspect/v1: a JSON object with a fixed key order
// (CI diffs two runs) and the text report's "key  value" table.
#include <set>

#include "inspect/facts/facts.h"
#include "inspect/inspect.h"

namespace trainimg::inspect {

namespace {

using nlohmann::ordered_json;

ordered_json found_json(const facts::Found& f, const char* path_key = "path") {
  ordered_json j;
  j[path_key] = f.path;
  j["layer"] = f.layer;
  j["version"] = f.version.empty() ? ordered_json() : ordered_json(f.version);
  j["version_from"] = f.version_from.empty() ? ordered_json() : ordered_json(f.version_from);
  return j;
}

ordered_json candidate_json(const facts::LoaderCandidate& c) {
  return {{"path", c.path}, {"resolved", c.resolved}, {"layer", c.layer}, {"how", c.how}};
}

// The prefix the votes agree on, or nullopt when none voted or they differ.
std::optional<std::string> selected_mpi(const facts::ImageFacts& f) {
  std::set<std::string> p;
  for (const auto& v : f.mpi_votes) p.insert(v.prefix);
  if (p.size() != 1) return std::nullopt;
  return *p.begin();
}

std::string short_layer(const std::string& l) {
  if (l.starts_with("sha256:") && l.size() > 19) return l.substr(0, 19);
  return l;
}

std::string described(const facts::Found& f) {
  std::string s = (f.version.empty() ? std::string("version unknown") : f.version) + "  " + f.path;
  if (!f.version_from.empty() && f.version_from != f.path) s += "  [from " + f.version_from + "]";
  if (!f.layer.empty()) s += "  (layer " + short_layer(f.layer) + ")";
  return s;
}

std::string apis(const std::vector<int>& v) {
  std::string s;
  for (int n : v) s += (s.empty() ? "v" : ",v") + std::to_string(n);
  return s.empty() ? "none" : s;
}

}  // namespace

nlohmann::ordered_json facts_json(const facts::ImageFacts& f) {
  ordered_json j;
  j["image"] = {{"reference", f.reference},
                {"kind", f.kind},
                {"digest", f.digest.empty() ? ordered_json() : ordered_json(f.digest)},
                {"layers", f.layers}};
  j["environment"] = {{"from", f.env_from}, {"env", f.env}};
  if (f.installer) {
    ordered_json pk = ordered_json::array();
    for (const auto& p : f.installer->packages) pk.push_back({{"name", p.name}, {"version", p.version}, {"arch", p.arch}});
    j["efa_installer"] = {{"path", f.installer->path},
                          {"layer", f.installer->layer},
                          {"version", f.installer->version.empty() ? ordered_json() : ordered_json(f.installer->version)},
                          {"packages", pk}};
  } else {
    j["efa_installer"] = nullptr;
  }
  j["libfabric"] = ordered_json::array();
  for (const auto& l : f.libfabrics) {
    auto x = found_json(l);
    x["efa_build"] = l.efa_build;
    j["libfabric"].push_back(x);
  }
  j["aws_ofi_nccl"] = ordered_json::array();
  for (const auto& p : f.plugins) {
    auto x = found_json(p);
    x["aws_ofi_nccl"] = p.aws_ofi_nccl;
    x["net_plugin_apis"] = p.net_apis;
    x["exports"] = p.exports;
    j["aws_ofi_nccl"].push_back(x);
  }
  j["nccl"] = ordered_json::array();
  for (const auto& n : f.nccls) j["nccl"].push_back(found_json(n));
  j["cuda"] = ordered_json::array();
  for (const auto& c : f.cudas) {
    auto x = found_json(c, "prefix");
    x["compat_libs"] = c.compat_libs;
    j["cuda"].push_back(x);
  }
  j["openmpi"] = ordered_json::array();
  for (const auto& m : f.mpis) {
    auto x = found_json(m, "prefix");
    x["origin"] = m.origin;
    j["openmpi"].push_back(x);
  }
  j["ld_so_conf"] = ordered_json::array();
  for (const auto& d : f.ld_so_conf) j["ld_so_conf"].push_back({{"dir", d.dir}, {"from", d.how}});
  j["loader_order"] = ordered_json::array();
  for (const auto& l : f.loader) {
    ordered_json c = ordered_json::array();
    for (const auto& k : l.candidates) c.push_back(candidate_json(k));
    j["loader_order"].push_back({{"library", l.library},
                                 {"requester", l.requester.empty() ? ordered_json() : ordered_json(l.requester)},
                                 {"selected", l.selected() ? ordered_json(l.selected()->path) : ordered_json()},
                                 {"candidates", c}});
  }
  auto plugin_env = f.env_value("NCCL_NET_PLUGIN");
  j["nccl_net_plugin"] = {{"NCCL_NET_PLUGIN", plugin_env ? ordered_json(*plugin_env) : ordered_json()},
                          {"names_tried", f.nccl_plugin_names},
                          {"loaded", f.nccl_plugin ? candidate_json(*f.nccl_plugin) : ordered_json()}};
  ordered_json votes = ordered_json::array();
  for (const auto& v : f.mpi_votes) votes.push_back({{"by", v.by}, {"detail", v.detail}, {"prefix", v.prefix}});
  auto sel = selected_mpi(f);
  j["mpi_selection"] = {{"selected", sel ? ordered_json(*sel) : ordered_json()},
                        {"ambiguous", !sel && !f.mpi_votes.empty()},
                        {"votes", votes}};
  j["removed"] = ordered_json::array();
  for (const auto& r : f.removed)
    j["removed"].push_back({{"path", r.path}, {"layer", r.layer}, {"removed_by", r.removed_by}});
  // What the rules do not read, so that facts_from_json gives back all of it.
  j["dpkg"] = ordered_json::object();
  for (const auto& [name, version] : f.dpkg) j["dpkg"][name] = version;
  j["elf_notes"] = ordered_json::array();
  for (const auto& n : f.elf_notes)
    j["elf_notes"].push_back({{"path", n.path}, {"layer", n.layer}, {"error", n.error}});
  j["truncated"] = f.truncated.empty() ? ordered_json() : ordered_json(f.truncated);
  j["facts_version"] = kFactsVersion;
  return j;
}

std::vector<std::pair<std::string, std::string>> facts_rows(const facts::ImageFacts& f) {
  std::vector<std::pair<std::string, std::string>> rows;
  rows.push_back({"image", f.reference + " (" + f.kind + ", " + std::to_string(f.layers.size()) + " layer" +
                               (f.layers.size() == 1 ? "" : "s") + ")"});
  if (f.installer) {
    rows.push_back({"EFA installer", (f.installer->version.empty() ? "version unknown" : f.installer->version) + "  " +
                                         f.installer->path + "  (layer " + short_layer(f.installer->layer) + ")"});
    std::string pk;
    for (const auto& p : f.installer->packages) pk += (pk.empty() ? "" : ", ") + p.name + " " + p.version;
    rows.push_back({"EFA packages", pk.empty() ? "none listed" : pk});
  } else {
    rows.push_back({"EFA installer", "none (no /opt/amazon/efa_installed_packages)"});
  }
  for (const auto& l : f.libfabrics) rows.push_back({"libfabric", described(l)});
  for (const auto& p : f.plugins)
    rows.push_back({p.aws_ofi_nccl ? "aws-ofi-nccl" : "NCCL net plugin", described(p) + "  APIs " + apis(p.net_apis)});
  for (const auto& n : f.nccls) rows.push_back({"NCCL", described(n)});
  for (const auto& c : f.cudas)
    rows.push_back({"CUDA", described(c) + (c.compat_libs.empty() ? "  no compat libs" : "  compat " + c.compat_libs.front())});
  for (const auto& m : f.mpis) rows.push_back({"Open MPI", described(m) + "  " + m.origin});
  rows.push_back({"environment from", f.env_from});
  for (const char* k : {"PATH", "LD_LIBRARY_PATH", "NCCL_NET_PLUGIN", "NCCL_TUNER_PLUGIN", "OPAL_PREFIX", "NCCL_NET"})
    if (auto v = f.env_value(k)) rows.push_back({std::string("  ") + k, *v});
  for (const auto& l : f.loader) {
    std::string s;
    for (const auto& c : l.candidates) s += (s.empty() ? "" : "  >  ") + c.path + " (" + c.how + ")";
    rows.push_back({"loader " + l.library, s.empty() ? "not found" : s});
  }
  std::string names;
  for (const auto& n : f.nccl_plugin_names) names += (names.empty() ? "" : ", ") + n;
  rows.push_back({"NCCL net plugin", (names.empty() ? std::string("none") : names) + " -> " +
                                         (f.nccl_plugin ? f.nccl_plugin->resolved : std::string("not found"))});
  auto sel = selected_mpi(f);
  std::string votes;
  for (const auto& v : f.mpi_votes) votes += (votes.empty() ? "" : ", ") + v.by + " -> " + v.prefix;
  rows.push_back({"selected MPI", f.mpi_votes.empty() ? "none" : (sel ? *sel : "ambiguous") + std::string("  (") + votes + ")"});
  for (const auto& r : f.removed)
    rows.push_back({"removed", r.path + " (layer " + short_layer(r.layer) + ") by layer " + short_layer(r.removed_by)});
  return rows;
}

}  // namespace trainimg::inspect
