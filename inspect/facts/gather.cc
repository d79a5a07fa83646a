// SPDX-License-Identifier: GPL-3.0-or-later
#include "inspect/facts/gather.h"

#include <algorithm>
#include <cctype>
#include <set>

#include "common/version.h"
#include "inspect/facts/capture.h"
#include "inspect/facts/loader.h"

namespace trainimg::inspect::facts {

namespace {

// Programs that need libmpi: enough to show a conflict, not a flood.
constexpr size_t kMaxElfVotes = 16;

std::string dir_of(const std::string& p) {
  auto s = p.rfind('/');
  return s == 0 || s == std::string::npos ? "/" : p.substr(0, s);
}
std::string base_of(const std::string& p) {
  return p.substr(p.rfind('/') + 1);
}
bool under(const std::string& p, const std::string& dir) {
  return dir == "/" || (p.size() > dir.size() && p.starts_with(dir) && p[dir.size()] == '/');
}

FileKind kind_of(const nlohmann::json& j) {
  return j.is_object() && j.contains("kind") ? static_cast<FileKind>(j["kind"].get<int>()) : FileKind::None;
}

class Gatherer {
 public:
  Gatherer(const ImageDescription& d, const MergedTree& tree) : d_(d), tree_(tree) {}
  ImageFacts run();

 private:
  const nlohmann::json* captured(const std::string& path) const {
    auto real = tree_.resolve(path);
    if (!real) return nullptr;
    auto it = tree_.captured.find(*real);
    return it == tree_.captured.end() || it->second.is_null() ? nullptr : &it->second;
  }
  std::string text(const std::string& path) const {
    const auto* j = captured(path);
    return j && j->contains("text") ? (*j)["text"].get<std::string>() : std::string();
  }
  std::string layer_of(const std::string& path) const {
    auto e = tree_.lookup(path);
    return e ? std::string(e->layer) : std::string();
  }
  std::optional<Requester> requester(const std::string& path) const {
    const auto* j = captured(path);
    if (!j || !j->contains("runpath")) return std::nullopt;
    return Requester{path, (*j)["runpath"].get<std::vector<std::string>>(),
                     (*j)["rpath"].get<std::vector<std::string>>()};
  }
  std::string resolved_or_self(const std::string& p) const {
    return tree_.resolve(p).value_or(normalize_path(p));
  }

  void environment();
  void installer();
  void libfabric(const std::string& path);
  void plugin(const std::string& path, const nlohmann::json& j);
  void nccl(const std::string& path, const nlohmann::json& j);
  void cuda();
  void compat_libs(const std::string& dir, int depth, std::vector<std::string>& out) const;
  void mpi_installs();
  void loader();
  void mpi_votes();
  void removed();
  std::string mpi_prefix_of_lib(const std::string& resolved_lib) const;

  const ImageDescription& d_;
  const MergedTree& tree_;
  ImageFacts f_;
  std::vector<std::string> programs_;  // captured ELFs that need libmpi
};

void Gatherer::environment() {
  if (d_.has_config) {
    f_.env = d_.config.env;
    // A .sqsh records the config Env as /etc/environment (enroot).
    f_.env_from = d_.kind == "sqsh" ? "/etc/environment" : "image config";
  } else if (const auto* j = captured("/etc/environment")) {
    f_.env = parse_environment_file((*j)["text"].get<std::string>());
    f_.env_from = "/etc/environment";
  } else {
    f_.env_from = "none";
  }
}

void Gatherer::installer() {
  const std::string path = "/opt/amazon/efa_installed_packages";
  const auto* j = captured(path);
  if (!j) return;
  EfaManifest m = parse_efa_manifest((*j)["text"].get<std::string>());
  EfaInstaller inst;
  inst.layer = layer_of(path);
  inst.version = m.installer_version;
  inst.packages = std::move(m.packages);
  f_.installer = std::move(inst);
}

void Gatherer::libfabric(const std::string& path) {
  Libfabric l;
  l.path = path;
  l.layer = layer_of(path);
  l.efa_build = under(path, "/opt/amazon/efa");
  const std::string libdir = dir_of(path), prefix = dir_of(libdir);
  // The .so file name is not the release (libfabric.so.1.25.0 is 2.x), so
  // only package records and the headers count.
  if (auto pc = libdir + "/pkgconfig/libfabric.pc"; !(l.version = parse_pc_version(text(pc))).empty()) {
    l.version_from = pc;
  } else if (auto p =
                 f_.installer && l.efa_build ? f_.installer->package(is_libfabric_package) : std::nullopt) {
    l.version = p->version;
    l.version_from = "EFA installer manifest (" + p->name + ")";
  } else if (auto h = prefix + "/include/rdma/fabric.h"; !(l.version = fabric_h_version(text(h))).empty()) {
    l.version_from = h;
  } else {
    for (const char* pkg : {"libfabric1-aws", "libfabric-aws", "libfabric1"}) {
      auto it = f_.dpkg.find(pkg);
      bool aws = std::string_view(pkg).find("aws") != std::string_view::npos;
      if (it != f_.dpkg.end() && aws == l.efa_build) {
        l.version = it->second;
        l.version_from = std::string("dpkg status (") + pkg + ")";
        break;
      }
    }
  }
  f_.libfabrics.push_back(std::move(l));
}

void Gatherer::plugin(const std::string& path, const nlohmann::json& j) {
  OfiPlugin p;
  p.path = path;
  p.layer = layer_of(path);
  for (const auto& s : j["exports"]) {
    std::string sym = s.get<std::string>();
    p.exports.push_back(sym);
    constexpr std::string_view kNet = "ncclNetPlugin_v";
    if (sym.starts_with(kNet) && sym.size() > kNet.size()) {
      std::string n = sym.substr(kNet.size());
      if (n.size() <= 3 &&
          std::all_of(n.begin(), n.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); }))
        p.net_apis.push_back(std::stoi(n));
    }
  }
  std::sort(p.net_apis.begin(), p.net_apis.end());
  const auto& markers = j["markers"];
  bool in_ofi_prefix = under(path, "/opt/amazon/ofi-nccl") || under(path, "/opt/amazon/aws-ofi-nccl");
  p.aws_ofi_nccl =
      markers.contains(kOfiMarker) || in_ofi_prefix || base_of(path).starts_with("libnccl-net-ofi");
  if (p.net_apis.empty() && !p.aws_ofi_nccl) return;  // not a net plugin at all
  if (markers.contains(kOfiMarker) && looks_like_version(markers[kOfiMarker].get<std::string>())) {
    p.version = markers[kOfiMarker].get<std::string>();
    p.version_from = "string in .rodata (\"NET/OFI Initializing aws-ofi-nccl …\")";
  } else if (auto pkg = f_.installer && under(path, "/opt/amazon/ofi-nccl")
                            ? f_.installer->package(is_ofi_nccl_package)
                            : std::nullopt) {
    p.version = pkg->version;
    p.version_from = "EFA installer manifest (" + pkg->name + ")";
  }
  f_.plugins.push_back(std::move(p));
}

void Gatherer::nccl(const std::string& path, const nlohmann::json& j) {
  Found n;
  n.path = path;
  n.layer = layer_of(path);
  const std::string base = base_of(path);
  std::string tail = base.substr(std::min(base.size(), std::string("libnccl.so.").size()));
  if (std::count(tail.begin(), tail.end(), '.') >= 2 && looks_like_version(tail)) {
    n.version = tail;
    n.version_from = "file name";
  } else if (j["markers"].contains(kNcclMarker)) {
    std::string v = j["markers"][kNcclMarker].get<std::string>();
    n.version = v.substr(0, v.find('+'));  // "2.30.7+cuda13.4"
    n.version_from = "string in .rodata (\"NCCL version …\")";
  } else if (auto h = dir_of(dir_of(path)) + "/include/nccl.h";
             !(n.version = nccl_h_version(text(h))).empty()) {
    n.version_from = h;
  } else if (auto env = f_.env_value("NCCL_VERSION")) {
    n.version = *env;
    n.version_from = "environment NCCL_VERSION";
  }
  f_.nccls.push_back(std::move(n));
}

void Gatherer::cuda() {
  for (const auto& [path, j] : tree_.captured) {
    if (kind_of(j) != FileKind::CudaJson || !tree_.lookup(path)) continue;
    Cuda c;
    c.path = dir_of(path);
    c.layer = layer_of(path);
    c.version = parse_cuda_version_json(j["text"].get<std::string>());
    c.version_from = path;
    f_.cudas.push_back(std::move(c));
  }
  if (f_.cudas.empty()) {
    if (auto env = f_.env_value("CUDA_VERSION")) {
      Cuda c;
      c.path = "/usr/local/cuda";
      c.version = *env;
      c.version_from = "environment CUDA_VERSION";
      f_.cudas.push_back(std::move(c));
    }
  }
  for (auto& c : f_.cudas)
    if (auto compat = tree_.resolve(c.path + "/compat")) compat_libs(*compat, 1, c.compat_libs);
}

// The cuda-compat-X-Y package puts libcuda.so.* in compat/ itself; NGC images
// keep them one level down, in compat/lib.real (compat/lib is made at start).
void Gatherer::compat_libs(const std::string& dir, int depth, std::vector<std::string>& out) const {
  for (const auto& child : tree_.children(dir)) {
    auto e = tree_.lookup(child);
    if (e && e->type == EntryType::Dir && depth > 0)
      compat_libs(child, depth - 1, out);
    else if (base_of(child).starts_with("libcuda.so"))
      out.push_back(child);
  }
}

// libtool's current.age of libmpi.so.40 per Open MPI series (Open MPI's
// VERSION files: 4.0 -> 40.20, 4.1 -> 40.30, 5.0 -> 40.40).
std::string series_from_libmpi(const std::string& base) {
  if (base.starts_with("libmpi.so.40.20.")) return "4.0";
  if (base.starts_with("libmpi.so.40.30.")) return "4.1";
  if (base.starts_with("libmpi.so.40.40.")) return "5.0";
  return {};
}

// "1:4.1.4-3+b1" -> "4.1.4": no epoch, no Debian revision.
std::string debian_upstream_version(std::string v) {
  if (auto c = v.find(':'); c != std::string::npos) v = v.substr(c + 1);
  if (auto d = v.rfind('-'); d != std::string::npos) v = v.substr(0, d);
  return v;
}

std::string mpi_origin(const std::string& prefix) {
  if (under(prefix, "/opt/amazon") && base_of(prefix).starts_with("openmpi")) return "efa-installer";
  if (prefix == "/usr/local/mpi" || under(prefix, "/opt/hpcx")) return "ngc";
  if (prefix == "/usr") return "distribution";
  return "other";
}

void Gatherer::mpi_installs() {
  std::set<std::string> prefixes;
  for (std::string_view launcher : {"/bin/mpirun", "/bin/prterun"})
    for (const auto& path : tree_.find_named(launcher.substr(5)))
      if (path.ends_with(launcher)) prefixes.insert(path.substr(0, path.size() - launcher.size()));
  for (const auto& prefix : prefixes) {
    std::string lib;
    // MPICH's libmpi is libmpi.so.12 too (and Debian's mpich owns
    // /usr/bin/mpirun through alternatives); Open MPI is libmpi.so.40 (3.x
    // to 5.x) or, before that, a libmpi beside its libopen-pal.
    bool open_mpi = false;
    for (const char* sub : {"/lib", "/lib64", "/lib/x86_64-linux-gnu", "/lib/x86_64-linux-gnu/openmpi/lib"}) {
      auto dir = tree_.resolve(prefix + sub);
      if (!dir) continue;
      for (const auto& c : tree_.children(*dir)) {
        const std::string base = base_of(c);
        if (base.starts_with("libmpi.so") && (lib.empty() || c.size() > lib.size())) lib = c;
        open_mpi = open_mpi || base.starts_with("libmpi.so.40") || base.starts_with("libopen-pal.so");
      }
      if (!lib.empty()) break;
    }
    // A launcher without libmpi, or another MPI's, is no Open MPI installation.
    if (lib.empty() || !open_mpi) continue;
    MpiInstall m;
    m.path = prefix.empty() ? "/" : prefix;
    m.layer = layer_of(lib);
    m.origin = mpi_origin(m.path);
    const std::string pc = dir_of(lib) + "/pkgconfig/ompi.pc", h = prefix + "/include/mpi.h";
    if (!(m.version = parse_pc_version(text(pc))).empty()) {
      m.version_from = pc;
    } else if (!(m.version = mpi_h_version(text(h))).empty()) {
      m.version_from = h;
    } else if (f_.installer && m.origin == "efa-installer") {
      // openmpi40-aws -> /opt/amazon/openmpi, openmpi50-aws -> /opt/amazon/openmpi5
      char series = base_of(prefix) == "openmpi" ? '4' : (base_of(prefix) == "openmpi5" ? '5' : 0);
      for (const auto& p : f_.installer->packages)
        if (series && p.name.starts_with("openmpi") && p.name.size() > 7 && p.name[7] == series) {
          m.version = p.version;
          m.version_from = "EFA installer manifest (" + p.name + ")";
          break;
        }
    }
    if (m.version.empty() && (prefix == "/usr" || prefix.empty())) {
      // The distribution's Open MPI (Debian/Ubuntu openmpi-bin, libopenmpi3…):
      // its package's upstream version, not the libtool series.
      for (const char* pkg :
           {"openmpi-bin", "libopenmpi3t64", "libopenmpi3", "libopenmpi40", "openmpi-common"}) {
        auto it = f_.dpkg.find(pkg);
        if (it == f_.dpkg.end()) continue;
        m.version = debian_upstream_version(it->second);
        m.version_from = std::string("dpkg status (") + pkg + " " + it->second + ")";
        break;
      }
    }
    if (m.version.empty() && !(m.version = series_from_libmpi(base_of(lib))).empty())
      m.version_from = base_of(lib) + " (libtool version)";
    f_.mpis.push_back(std::move(m));
  }
}

void Gatherer::loader() {
  const auto lld = split_colon(f_.env_value("LD_LIBRARY_PATH").value_or(""));
  f_.ld_so_conf = ld_so_conf_dirs(tree_);
  LoaderOrder nccl = resolve_library(tree_, "libnccl.so.2", lld, f_.ld_so_conf);
  // Images pin their NCCL with LD_PRELOAD (awsome-distributed-training's
  // nccl-tests.Dockerfile: LD_PRELOAD=/opt/nccl/build/lib/libnccl.so): that
  // one is loaded whatever the search finds.
  auto pre = preloaded(tree_, f_.env_value("LD_PRELOAD").value_or(""), "libnccl.so", lld, f_.ld_so_conf);
  nccl.candidates.insert(nccl.candidates.begin(), pre.begin(), pre.end());
  std::optional<Requester> nccl_req = nccl.selected() ? requester(nccl.selected()->resolved) : std::nullopt;
  const Requester* nr = nccl_req ? &*nccl_req : nullptr;
  LoaderOrder ofi = resolve_library(tree_, "libnccl-net-ofi.so", lld, f_.ld_so_conf, nr);
  f_.nccl_plugin_names = nccl_net_plugin_names(f_.env_value("NCCL_NET_PLUGIN"));
  for (const auto& name : f_.nccl_plugin_names) {
    LoaderOrder o = resolve_library(tree_, name, lld, f_.ld_so_conf, nr);
    if (o.selected()) {
      f_.nccl_plugin = *o.selected();
      break;
    }
  }
  // libfabric as the plugin NCCL loads would find it.
  std::optional<Requester> plug_req;
  if (f_.nccl_plugin)
    plug_req = requester(f_.nccl_plugin->resolved);
  else if (ofi.selected())
    plug_req = requester(ofi.selected()->resolved);
  LoaderOrder fabric =
      resolve_library(tree_, "libfabric.so.1", lld, f_.ld_so_conf, plug_req ? &*plug_req : nullptr);
  LoaderOrder mpi = resolve_library(tree_, "libmpi.so.40", lld, f_.ld_so_conf);
  f_.loader = {std::move(fabric), std::move(ofi), std::move(mpi), std::move(nccl)};
}

std::string Gatherer::mpi_prefix_of_lib(const std::string& resolved_lib) const {
  const std::string dir = dir_of(resolved_lib);
  for (const auto& m : f_.mpis)
    if (under(resolved_lib, resolved_or_self(m.path))) return m.path;
  return dir_of(dir);
}

void Gatherer::mpi_votes() {
  const auto lld = split_colon(f_.env_value("LD_LIBRARY_PATH").value_or(""));
  auto install_of = [&](const std::string& prefix) {
    std::string real = resolved_or_self(prefix);
    for (const auto& m : f_.mpis)
      if (resolved_or_self(m.path) == real) return m.path;
    return prefix;
  };
  for (const auto& d : split_colon(f_.env_value("PATH").value_or(""))) {
    auto real = tree_.resolve(d + "/mpirun");
    auto e = real ? tree_.lookup(*real) : std::nullopt;
    if (!e || e->type != EntryType::File) continue;
    f_.mpi_votes.push_back({"PATH", normalize_path(d + "/mpirun"), install_of(dir_of(normalize_path(d)))});
    break;
  }
  if (auto opal = f_.env_value("OPAL_PREFIX"); opal && !opal->empty())
    f_.mpi_votes.push_back({"OPAL_PREFIX", *opal, install_of(normalize_path(*opal))});
  if (const auto* l = f_.loader_for("libmpi.so.40"); l && l->selected())
    f_.mpi_votes.push_back({"loader", l->selected()->path + " (" + l->selected()->how + ")",
                            mpi_prefix_of_lib(l->selected()->resolved)});
  size_t n = 0;
  for (const auto& path : programs_) {
    if (n >= kMaxElfVotes) break;
    bool inside_mpi = false;
    for (const auto& m : f_.mpis) inside_mpi = inside_mpi || under(path, resolved_or_self(m.path));
    if (inside_mpi) continue;  // an installation's own tools point at itself
    const auto& j = *captured(path);
    for (const auto& need : j["needed"]) {
      std::string name = need.get<std::string>();
      if (!name.starts_with("libmpi.so")) continue;
      auto req = requester(path);
      LoaderOrder o = resolve_library(tree_, name, lld, f_.ld_so_conf, req ? &*req : nullptr);
      if (!o.selected()) continue;
      f_.mpi_votes.push_back(
          {"ELF run path",
           path + " needs " + name + ": " + o.selected()->path + " (" + o.selected()->how + ")",
           mpi_prefix_of_lib(o.selected()->resolved)});
      ++n;
    }
  }
}

void Gatherer::removed() {
  for (const auto& e : tree_.removed()) {
    const std::string base = base_of(e.path);
    bool efa = under(e.path, "/opt/amazon/efa") && base.starts_with("libfabric.so");
    bool ofi = (under(e.path, "/opt/amazon/ofi-nccl") || under(e.path, "/opt/amazon/aws-ofi-nccl")) &&
               base.starts_with("libnccl-net");
    if (!(efa || ofi) || tree_.lookup(e.path)) continue;
    f_.removed.push_back({e.path, std::string(e.layer), std::string(e.removed_by)});
  }
}

ImageFacts Gatherer::run() {
  f_.reference = d_.reference;
  f_.kind = d_.kind;
  f_.digest = d_.digest;
  f_.layers = d_.layers;
  environment();
  installer();
  if (const auto* j = captured("/var/lib/dpkg/status"))
    f_.dpkg = (*j)["packages"].get<std::map<std::string, std::string>>();
  for (const auto& [path, j] : tree_.captured) {
    FileKind k = kind_of(j);
    auto e = tree_.lookup(path);
    if (!e || (k != FileKind::ElfLibrary && k != FileKind::ElfProgram)) continue;
    if (!j["error"].get<std::string>().empty())
      f_.elf_notes.push_back({path, std::string(e->layer), j["error"].get<std::string>()});
    const std::string base = base_of(path);
    if (k == FileKind::ElfLibrary && base.starts_with("libfabric.so"))
      libfabric(path);
    else if (k == FileKind::ElfLibrary && base.starts_with("libnccl-net"))
      plugin(path, j);
    else if (k == FileKind::ElfLibrary && base.starts_with("libnccl.so"))
      nccl(path, j);
    for (const auto& need : j["needed"])
      if (need.get<std::string>().starts_with("libmpi.so")) {
        programs_.push_back(path);
        break;
      }
  }
  cuda();
  mpi_installs();
  loader();
  mpi_votes();
  removed();
  return std::move(f_);
}

}  // namespace

ImageFacts facts_from_tree(const ImageDescription& d, const MergedTree& tree) {
  return Gatherer(d, tree).run();
}

ImageFacts gather_facts(ImageSource& src) {
  ImageDescription d = src.describe();
  MergedTree tree = build_tree(src, [](const Entry& e) { return classify(e) != FileKind::None; },
                               capture_file, {"mpirun", "prterun"});
  ImageFacts f = facts_from_tree(d, tree);
  f.truncated = tree.truncated;
  return f;
}

}  // namespace trainimg::inspect::facts
