// SPDX-License-Identifier: GPL-3.0-or-later
// facts_from_json: the facts of trainimg.inspect/v1 read back (the sidecar of
// an import keeps them for the job-start gate). The input may come from a
// world-writable directory, so it is read strictly: every key facts_json
// writes, no other, each of its type; then it must serialize back to itself,
// so a derived value that disagrees (a loader order's "selected") is refused
// too. Any failure is one Error naming the key as a JSON pointer.
#include <algorithm>
#include <initializer_list>
#include <string>
#include <vector>

#include "common/error.h"
#include "inspect/facts/facts.h"
#include "inspect/inspect.h"

namespace trainimg::inspect {

namespace {

using J = nlohmann::ordered_json;

// A key from the input, quoted and escaped: messages stay one line.
std::string quoted(const std::string& k) {
  return J(k.size() > 64 ? k.substr(0, 64) + "..." : k).dump(-1, ' ', false, J::error_handler_t::replace);
}

class Reader {
 public:
  explicit Reader(std::string what) : what_(std::move(what)) {}

  [[noreturn]] void fail(const std::string& at, const std::string& msg) const {
    throw Error(what_, "facts" + at + ": " + msg, "import the image again to rewrite its facts");
  }

  // `j` is an object with exactly `keys`.
  const J& object(const J& j, const std::string& at, std::initializer_list<const char*> keys) const {
    if (!j.is_object()) fail(at, std::string("expected an object, not ") + j.type_name());
    for (const char* k : keys)
      if (!j.contains(k)) fail(at, std::string("no \"") + k + "\"");
    if (j.size() != keys.size())
      for (const auto& [k, v] : j.items())
        if (std::find_if(keys.begin(), keys.end(), [&](const char* x) { return k == x; }) == keys.end())
          fail(at, "unexpected key " + quoted(k));
    return j;
  }
  const J& array(const J& j, const std::string& at) const {
    if (!j.is_array()) fail(at, std::string("expected an array, not ") + j.type_name());
    return j;
  }
  std::string str(const J& j, const std::string& at) const {
    if (!j.is_string()) fail(at, std::string("expected a string, not ") + j.type_name());
    return j.get<std::string>();
  }
  // A string, or null for "" (facts_json writes unknown values as null).
  std::string opt_str(const J& j, const std::string& at) const {
    return j.is_null() ? std::string() : str(j, at);
  }
  bool boolean(const J& j, const std::string& at) const {
    if (!j.is_boolean()) fail(at, std::string("expected true or false, not ") + j.type_name());
    return j.get<bool>();
  }
  std::vector<std::string> strings(const J& j, const std::string& at) const {
    std::vector<std::string> out;
    size_t i = 0;
    for (const auto& x : array(j, at)) out.push_back(str(x, at + "/" + std::to_string(i++)));
    return out;
  }
  std::vector<int> ints(const J& j, const std::string& at) const {
    std::vector<int> out;
    size_t i = 0;
    for (const auto& x : array(j, at)) {
      if (!x.is_number_integer() || x.get<int64_t>() < 0 || x.get<int64_t>() > 1000000)
        fail(at + "/" + std::to_string(i), std::string("expected a small whole number, not ") +
                                               (x.is_number() ? "that number" : x.type_name()));
      out.push_back(x.get<int>());
      ++i;
    }
    return out;
  }
  // Reads each element of the array `j` with `one(element, its pointer)`.
  template <typename T, typename F>
  std::vector<T> each(const J& j, const std::string& at, F one) const {
    std::vector<T> out;
    size_t i = 0;
    for (const auto& x : array(j, at)) out.push_back(one(x, at + "/" + std::to_string(i++)));
    return out;
  }

  void found(const J& j, const std::string& at, facts::Found& f, const char* path_key,
             std::initializer_list<const char*> keys) const {
    object(j, at, keys);
    f.path = str(j[path_key], at + "/" + path_key);
    f.layer = str(j["layer"], at + "/layer");
    f.version = opt_str(j["version"], at + "/version");
    f.version_from = opt_str(j["version_from"], at + "/version_from");
  }
  facts::LoaderCandidate candidate(const J& j, const std::string& at) const {
    object(j, at, {"path", "resolved", "layer", "how"});
    return {str(j["path"], at + "/path"), str(j["resolved"], at + "/resolved"),
            str(j["layer"], at + "/layer"), str(j["how"], at + "/how")};
  }

 private:
  std::string what_;
};

void read_image(const Reader& r, const J& j, facts::ImageFacts& f) {
  r.object(j["image"], "/image", {"reference", "kind", "digest", "layers"});
  const J& im = j["image"];
  f.reference = r.str(im["reference"], "/image/reference");
  f.kind = r.str(im["kind"], "/image/kind");
  f.digest = r.opt_str(im["digest"], "/image/digest");
  f.layers = r.strings(im["layers"], "/image/layers");
  r.object(j["environment"], "/environment", {"from", "env"});
  f.env_from = r.str(j["environment"]["from"], "/environment/from");
  f.env = r.strings(j["environment"]["env"], "/environment/env");
  if (const J& in = j["efa_installer"]; !in.is_null()) {
    r.object(in, "/efa_installer", {"path", "layer", "version", "packages"});
    facts::EfaInstaller x;
    x.path = r.str(in["path"], "/efa_installer/path");
    x.layer = r.str(in["layer"], "/efa_installer/layer");
    x.version = r.opt_str(in["version"], "/efa_installer/version");
    x.packages = r.each<facts::Package>(
        in["packages"], "/efa_installer/packages", [&](const J& p, const std::string& at) {
          r.object(p, at, {"name", "version", "arch"});
          return facts::Package{r.str(p["name"], at + "/name"), r.str(p["version"], at + "/version"),
                                r.str(p["arch"], at + "/arch")};
        });
    f.installer = std::move(x);
  }
}

void read_components(const Reader& r, const J& j, facts::ImageFacts& f) {
  f.libfabrics =
      r.each<facts::Libfabric>(j["libfabric"], "/libfabric", [&](const J& x, const std::string& at) {
        facts::Libfabric l;
        r.found(x, at, l, "path", {"path", "layer", "version", "version_from", "efa_build"});
        l.efa_build = r.boolean(x["efa_build"], at + "/efa_build");
        return l;
      });
  f.plugins =
      r.each<facts::OfiPlugin>(j["aws_ofi_nccl"], "/aws_ofi_nccl", [&](const J& x, const std::string& at) {
        facts::OfiPlugin p;
        r.found(x, at, p, "path",
                {"path", "layer", "version", "version_from", "aws_ofi_nccl", "net_plugin_apis", "exports"});
        p.aws_ofi_nccl = r.boolean(x["aws_ofi_nccl"], at + "/aws_ofi_nccl");
        p.net_apis = r.ints(x["net_plugin_apis"], at + "/net_plugin_apis");
        p.exports = r.strings(x["exports"], at + "/exports");
        return p;
      });
  f.nccls = r.each<facts::Found>(j["nccl"], "/nccl", [&](const J& x, const std::string& at) {
    facts::Found n;
    r.found(x, at, n, "path", {"path", "layer", "version", "version_from"});
    return n;
  });
  f.cudas = r.each<facts::Cuda>(j["cuda"], "/cuda", [&](const J& x, const std::string& at) {
    facts::Cuda c;
    r.found(x, at, c, "prefix", {"prefix", "layer", "version", "version_from", "compat_libs"});
    c.compat_libs = r.strings(x["compat_libs"], at + "/compat_libs");
    return c;
  });
  f.mpis = r.each<facts::MpiInstall>(j["openmpi"], "/openmpi", [&](const J& x, const std::string& at) {
    facts::MpiInstall m;
    r.found(x, at, m, "prefix", {"prefix", "layer", "version", "version_from", "origin"});
    m.origin = r.str(x["origin"], at + "/origin");
    return m;
  });
}

void read_loader(const Reader& r, const J& j, facts::ImageFacts& f) {
  f.ld_so_conf =
      r.each<facts::SearchDir>(j["ld_so_conf"], "/ld_so_conf", [&](const J& x, const std::string& at) {
        r.object(x, at, {"dir", "from"});
        return facts::SearchDir{r.str(x["dir"], at + "/dir"), r.str(x["from"], at + "/from")};
      });
  f.loader =
      r.each<facts::LoaderOrder>(j["loader_order"], "/loader_order", [&](const J& x, const std::string& at) {
        r.object(x, at, {"library", "requester", "selected", "candidates"});
        facts::LoaderOrder l;
        l.library = r.str(x["library"], at + "/library");
        l.requester = r.opt_str(x["requester"], at + "/requester");
        l.candidates = r.each<facts::LoaderCandidate>(
            x["candidates"], at + "/candidates",
            [&](const J& c, const std::string& cat) { return r.candidate(c, cat); });
        return l;  // "selected" is the first candidate: checked by the round trip
      });
  r.object(j["nccl_net_plugin"], "/nccl_net_plugin", {"NCCL_NET_PLUGIN", "names_tried", "loaded"});
  const J& np = j["nccl_net_plugin"];
  f.nccl_plugin_names = r.strings(np["names_tried"], "/nccl_net_plugin/names_tried");
  if (!np["loaded"].is_null()) f.nccl_plugin = r.candidate(np["loaded"], "/nccl_net_plugin/loaded");
  r.object(j["mpi_selection"], "/mpi_selection", {"selected", "ambiguous", "votes"});
  f.mpi_votes = r.each<facts::MpiVote>(
      j["mpi_selection"]["votes"], "/mpi_selection/votes", [&](const J& x, const std::string& at) {
        r.object(x, at, {"by", "detail", "prefix"});
        return facts::MpiVote{r.str(x["by"], at + "/by"), r.str(x["detail"], at + "/detail"),
                              r.str(x["prefix"], at + "/prefix")};
      });
}

void read_rest(const Reader& r, const J& j, facts::ImageFacts& f) {
  f.removed = r.each<facts::Removed>(j["removed"], "/removed", [&](const J& x, const std::string& at) {
    r.object(x, at, {"path", "layer", "removed_by"});
    return facts::Removed{r.str(x["path"], at + "/path"), r.str(x["layer"], at + "/layer"),
                          r.str(x["removed_by"], at + "/removed_by")};
  });
  if (!j["dpkg"].is_object())
    r.fail("/dpkg", std::string("expected an object, not ") + j["dpkg"].type_name());
  for (const auto& [k, v] : j["dpkg"].items()) f.dpkg[k] = r.str(v, "/dpkg/" + quoted(k));
  f.elf_notes = r.each<facts::ElfNote>(j["elf_notes"], "/elf_notes", [&](const J& x, const std::string& at) {
    r.object(x, at, {"path", "layer", "error"});
    return facts::ElfNote{r.str(x["path"], at + "/path"), r.str(x["layer"], at + "/layer"),
                          r.str(x["error"], at + "/error")};
  });
  f.truncated = r.opt_str(j["truncated"], "/truncated");
}

}  // namespace

facts::ImageFacts facts_from_json(const nlohmann::ordered_json& j, const std::string& what) {
  Reader r(what);
  if (!j.is_object()) r.fail("", std::string("expected an object, not ") + j.type_name());
  if (!j.contains("facts_version"))
    r.fail("", "no facts_version (written by a trainimg older than facts_version " +
                   std::to_string(kFactsVersion) + ")");
  if (const J& v = j["facts_version"]; !v.is_number_integer() || v.get<int64_t>() != kFactsVersion)
    r.fail("/facts_version",
           (v.is_number_integer() ? std::to_string(v.get<int64_t>()) : std::string(v.type_name())) +
               " is not " + std::to_string(kFactsVersion) + " (written by another trainimg version)");
  r.object(j, "",
           {"image", "environment", "efa_installer", "libfabric", "aws_ofi_nccl", "nccl", "cuda", "openmpi",
            "ld_so_conf", "loader_order", "nccl_net_plugin", "mpi_selection", "removed", "dpkg", "elf_notes",
            "truncated", "facts_version"});
  facts::ImageFacts f;
  read_image(r, j, f);
  read_components(r, j, f);
  read_loader(r, j, f);
  read_rest(r, j, f);
  // Every key was read with its type: comparing is safe and catches derived
  // values that disagree and values facts_json would have written otherwise.
  if (facts_json(f) != j) {
    J back = facts_json(f);
    for (const auto& [k, v] : j.items())
      if (back[k] != v)
        r.fail("/" + k, "is not what these facts give (edited, or not written by facts_json)");
    r.fail("", "keys out of order (not written by facts_json)");
  }
  return f;
}

Report report_from_facts_json(const nlohmann::ordered_json& j, const ImageExpectations& e,
                              const std::string& what) {
  return make_report(facts_from_json(j, what), e);
}

}  // namespace trainimg::inspect
