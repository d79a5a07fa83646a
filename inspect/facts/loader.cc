// SPDX-License-Identifier: GPL-3.0-or-later
#include "inspect/facts/loader.h"

#include <fnmatch.h>
#include <strings.h>

#include <set>

namespace trainimg::inspect::facts {

namespace {

constexpr int kMaxIncludeDepth = 8;

std::string dir_of(const std::string& p) {
  auto s = p.rfind('/');
  return s == 0 || s == std::string::npos ? "/" : p.substr(0, s);
}

std::string conf_text(const MergedTree& tree, const std::string& path) {
  auto real = tree.resolve(path);
  if (!real) return {};
  auto it = tree.captured.find(*real);
  if (it == tree.captured.end() || !it->second.is_object() || !it->second.contains("text")) return {};
  return it->second["text"].get<std::string>();
}

void read_conf(const MergedTree& tree, const std::string& file, int depth, std::set<std::string>& seen,
               std::vector<SearchDir>& out) {
  if (depth > kMaxIncludeDepth || !seen.insert(file).second) return;
  for (const auto& item : parse_ld_so_conf(conf_text(tree, file))) {
    if (!item.include) {
      out.push_back({normalize_path(item.value), file});
      continue;
    }
    // Relative include patterns are relative to the including file's directory.
    std::string pattern = item.value[0] == '/' ? item.value : dir_of(file) + "/" + item.value;
    pattern = normalize_path(pattern);
    auto real_dir = tree.resolve(dir_of(pattern));
    if (!real_dir) continue;
    std::string base_pattern = pattern.substr(pattern.rfind('/') + 1);
    for (const auto& child : tree.children(*real_dir)) {  // sorted, as glob(3) sorts
      std::string base = child.substr(child.rfind('/') + 1);
      if (fnmatch(base_pattern.c_str(), base.c_str(), FNM_PERIOD) == 0)
        read_conf(tree, dir_of(pattern) + "/" + base, depth + 1, seen, out);
    }
  }
}

std::string substitute_origin(std::string dir, const std::string& origin) {
  for (const char* token : {"${ORIGIN}", "$ORIGIN"}) {
    std::string t(token);
    for (size_t at = dir.find(t); at != std::string::npos; at = dir.find(t)) dir.replace(at, t.size(), origin);
  }
  return dir;
}

}  // namespace

std::vector<SearchDir> ld_so_conf_dirs(const MergedTree& tree) {
  std::vector<SearchDir> out;
  std::set<std::string> seen;
  read_conf(tree, "/etc/ld.so.conf", 0, seen, out);
  return out;
}

const std::vector<std::string>& default_dirs() {
  static const std::vector<std::string> kDirs = {"/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib",
                                                 "/usr/lib"};
  return kDirs;
}

LoaderOrder resolve_library(const MergedTree& tree, const std::string& name,
                            const std::vector<std::string>& ld_library_path, const std::vector<SearchDir>& conf,
                            const Requester* req) {
  LoaderOrder order;
  order.library = name;
  if (req) order.requester = req->path;
  std::vector<SearchDir> dirs;
  if (name.find('/') != std::string::npos) {
    dirs.push_back({dir_of(normalize_path(name)), "path in NCCL_NET_PLUGIN"});
  } else {
    const std::string origin = req ? dir_of(req->path) : "/";
    if (req && req->runpath.empty())
      for (const auto& d : req->rpath) dirs.push_back({substitute_origin(d, origin), "DT_RPATH of " + req->path});
    for (const auto& d : ld_library_path) dirs.push_back({d, "LD_LIBRARY_PATH"});
    if (req)
      for (const auto& d : req->runpath) dirs.push_back({substitute_origin(d, origin), "DT_RUNPATH of " + req->path});
    dirs.insert(dirs.end(), conf.begin(), conf.end());
    for (const auto& d : default_dirs()) dirs.push_back({d, "default directory"});
  }
  const std::string base = name.substr(name.rfind('/') + 1);
  std::set<std::string> tried;
  for (const auto& d : dirs) {
    if (d.dir.empty() || d.dir[0] != '/') continue;  // relative entries depend on the working directory
    std::string path = normalize_path(d.dir + "/" + base);
    if (!tried.insert(path).second) continue;
    auto real = tree.resolve(path);
    if (!real) continue;
    auto e = tree.lookup(*real);
    if (!e || e->type != EntryType::File) continue;
    order.candidates.push_back({path, *real, std::string(e->layer), d.how});
  }
  return order;
}

std::vector<LoaderCandidate> preloaded(const MergedTree& tree, std::string_view value,
                                       std::string_view prefix,
                                       const std::vector<std::string>& ld_library_path,
                                       const std::vector<SearchDir>& conf) {
  std::vector<LoaderCandidate> out;
  size_t b = 0;
  while (b < value.size()) {
    size_t e = value.find_first_of(" :", b);
    if (e == std::string_view::npos) e = value.size();
    std::string entry(value.substr(b, e - b));
    b = e + 1;
    if (entry.empty() || !entry.substr(entry.rfind('/') + 1).starts_with(prefix)) continue;
    LoaderOrder o = resolve_library(tree, entry, ld_library_path, conf);
    if (const auto* c = o.selected()) out.push_back({c->path, c->resolved, c->layer, "LD_PRELOAD"});
  }
  return out;
}

std::vector<std::string> nccl_net_plugin_names(const std::optional<std::string>& value) {
  if (!value) return {"libnccl-net.so"};
  // A comma-separated list since NCCL 2.2x; "none" disables external plugins
  // (v2.30.7-1 src/plugin/net.cc initPluginLibsOnceFunc).
  std::vector<std::string> names;
  if (strcasecmp(value->c_str(), "none") == 0) return names;
  size_t b = 0;
  while (b <= value->size()) {
    size_t e = value->find(',', b);
    if (e == std::string::npos) e = value->size();
    std::string v = value->substr(b, e - b);
    b = e + 1;
    if (v.empty()) continue;
    names.push_back(v);
    bool lib_name = v.starts_with("lib") && v.ends_with(".so");
    if (v.find('/') == std::string::npos && !lib_name) names.push_back("libnccl-net-" + v + ".so");
  }
  return names;
}

}  // namespace trainimg::inspect::facts
